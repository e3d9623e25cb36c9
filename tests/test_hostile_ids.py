"""Series ids are data: reports and `forecaster explain` draw them literally and never build paths from them."""

import dataclasses
import os
from pathlib import Path

import matplotlib.pyplot as plt
import pytest
from conftest import fast_model
from matplotlib.figure import Figure
from matplotlib.text import Text

import forecaster
from forecaster.cli import main

# Two `$` that mathtext cannot parse (crashed savefig), two it can (silently drawn as math),
# path separators and traversal, ids that collide once `/` becomes `_`, spaces and unicode.
HOSTILE = [
    "price_$1_to_$2",
    "cost $5 to $9",
    "$\\alpha$",
    "a/b",
    "a_b",
    "../../evil",
    "x$",
    "Zürich store #1 \u00fc\u2603",
]


def _files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


def _explain(tmp_path: Path, out: Path, *ids: str) -> int:
    return main(["explain", str(tmp_path / "model"), "--data", str(tmp_path / "history.csv"), "--out", str(out), "--ids", *ids])


@pytest.fixture(scope="module")
def hostile(panel):
    df, _ = panel
    names = dict(zip(sorted(df["unique_id"].unique()), HOSTILE, strict=True))
    return df.assign(unique_id=df["unique_id"].map(names))


@pytest.fixture(scope="module")
def hostile_result(hostile):
    return forecaster.backtest(fast_model(), hostile, n_windows=1, baselines=("seasonal_naive",), progress=False)


@pytest.fixture
def saved(monkeypatch):
    """Every figure saved: its target path and the strings its texts are drawn as.

    A text that matplotlib would render as mathtext or TeX fails the test (the id is not shown as written).
    """
    records: list[tuple[Path | None, list[str]]] = []
    original = Figure.savefig

    def savefig(self, fname, *args, **kwargs):
        shown = []
        for text in self.findobj(Text):
            # what Text.draw uses: (string drawn, False) when drawn as plain text, with `\$` unescaped
            string, math = text._preprocess_math(text.get_text())
            assert not math, f"{text.get_text()!r} would be drawn as {'TeX' if math == 'TeX' else 'mathtext'}"
            shown.append(string)
        records.append((Path(fname) if isinstance(fname, (str, os.PathLike)) else None, shown))
        return original(self, fname, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    return records


def test_report_draws_hostile_ids_literally(tmp_path, hostile_result, saved):
    out = tmp_path / "r"
    assert hostile_result.to_report(out) == out / "report.md"
    assert {p.parent for p in _files(tmp_path)} == {out}, "a file was written outside the report folder"
    assert all(path is None or path.resolve().is_relative_to(tmp_path.resolve()) for path, _ in saved)
    picks = forecaster.evaluation.report.representative_series(hostile_result.metrics)
    drawn = [s for _, shown in saved for s in shown]
    for label, uid in picks.items():
        assert any(s.startswith(f"{uid}: {label} series, cutoff ") for s in drawn)  # the report's own title, literal
        assert f"{uid}: where each horizon step looked" in drawn  # plot_attention's title, literal
    text = (out / "report.md").read_text()
    assert all(f"(`{uid}`)" in text for uid in picks.values())  # a code span: no Markdown emphasis or `$` math


def test_explain_draws_hostile_ids_literally_and_names_files_safely(tmp_path, hostile, saved):
    model = fast_model().fit(hostile)
    model.save(tmp_path / "model")
    hostile.to_csv(tmp_path / "history.csv", index=False, encoding="utf-8")
    out = tmp_path / "deep" / "er" / "plots"
    before = _files(tmp_path)
    assert _explain(tmp_path, out, *HOSTILE) == 0
    written = _files(tmp_path) - before
    assert written and all(p.resolve().parent == out.resolve() for p in written), sorted(map(str, written))
    pngs = sorted(p.name for p in written if p.name.startswith("attention_") and p.name != "attention_profile.png")
    assert len(pngs) == len(HOSTILE), pngs  # one per id: `a/b` and `a_b` do not overwrite each other
    assert all(set(name) <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") for name in pngs)
    drawn = [s for _, shown in saved for s in shown]
    for uid in HOSTILE:
        assert f"{uid}: where each horizon step looked" in drawn  # attention plot title
        assert uid in drawn  # forecasts.png panel title


def test_explain_rejects_unknown_ids_before_creating_the_output_folder(tmp_path, panel, capsys):
    df, _ = panel
    fast_model().fit(df).save(tmp_path / "model")
    df.to_csv(tmp_path / "history.csv", index=False)
    out = tmp_path / "plots"
    with pytest.raises(SystemExit) as raised:
        _explain(tmp_path, out, "S000", "nope")
    assert raised.value.code == 2
    message = capsys.readouterr().err
    assert "'nope'" in message and "'S001'" in message  # the unknown id and some known ones
    assert not out.exists()


def test_failed_report_leaves_the_previous_report_untouched(tmp_path, hostile_result, monkeypatch):
    out = tmp_path / "r"
    hostile_result.to_report(out, title="first")
    (out / "notes.txt").write_text("mine")  # a file of the user's beside the report
    before = {p: p.read_bytes() for p in _files(out)}
    changed = dataclasses.replace(hostile_result, forecasts=hostile_result.forecasts.assign(seq2seq=lambda f: f["seq2seq"] + 1))

    def broken(*args, **kwargs):
        raise RuntimeError("plotting failed")

    monkeypatch.setattr(forecaster.evaluation.report, "plot_attention_profile", broken)
    with pytest.raises(RuntimeError, match="plotting failed"):
        changed.to_report(out, title="second")
    assert {p: p.read_bytes() for p in _files(out)} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"], "a temporary folder was left behind"
    with pytest.raises(RuntimeError, match="plotting failed"):
        changed.to_report(tmp_path / "new" / "report")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"], "a failed first write left a folder"


def test_rewritten_report_drops_files_of_the_previous_report_only(tmp_path, hostile_result):
    out = tmp_path / "r"
    hostile_result.to_report(out, title="first")
    assert (out / "attention_profile.png").exists()
    (out / "notes.txt").write_text("mine")
    dataclasses.replace(hostile_result, attention=None).to_report(out, title="second")
    names = {p.name for p in out.iterdir()}
    assert "notes.txt" in names and not any(n.startswith("attention_") for n in names)
    assert "# second" in (out / "report.md").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]
    plt.close("all")


def test_a_report_without_quantiles_drops_the_previous_calibration_files(tmp_path, hostile_result):
    out = tmp_path / "r"
    hostile_result.to_report(out)
    assert {"calibration.csv", "calibration_by_fold.csv"} <= {p.name for p in out.iterdir()}
    dataclasses.replace(hostile_result, quantile_metrics=None).to_report(out)
    assert not {"calibration.csv", "calibration_by_fold.csv"} & {p.name for p in out.iterdir()}
    plt.close("all")


def test_a_report_interrupted_while_its_files_are_swapped_in_leaves_the_previous_report(tmp_path, hostile_result, monkeypatch):
    """The files were replaced one by one: an interrupt at the fourth left new forecasts beside old plots."""
    import os as real_os

    out = tmp_path / "r"
    hostile_result.to_report(out, title="first")
    (out / "notes.txt").write_text("mine")
    before = {p: p.read_bytes() for p in _files(out)}
    changed = dataclasses.replace(hostile_result, forecasts=hostile_result.forecasts.assign(seq2seq=lambda f: f["seq2seq"] + 1))
    calls = {"n": 0}
    original = real_os.replace

    def interrupted(source, destination):
        calls["n"] += 1
        if calls["n"] == 20:  # past the previous files' move out of the way, into the new files' move in
            raise KeyboardInterrupt
        return original(source, destination)

    monkeypatch.setattr(forecaster.evaluation.staged_folder.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        changed.to_report(out, title="second")
    monkeypatch.setattr(forecaster.evaluation.staged_folder.os, "replace", original)
    assert {p: p.read_bytes() for p in _files(out)} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"], "a temporary folder was left behind"


def test_an_interrupted_explain_leaves_no_partial_output(tmp_path, panel, monkeypatch):
    """`forecaster explain` wrote into --out directly: an interrupt while writing attention.csv left five plots and
    no table."""
    import pandas as pd

    df, _ = panel
    fast_model().fit(df).save(tmp_path / "model")
    df.to_csv(tmp_path / "history.csv", index=False)
    out = tmp_path / "plots"
    original = pd.DataFrame.to_csv

    def interrupted(frame, path=None, *args, **kwargs):
        if str(path).endswith("attention.csv"):
            raise KeyboardInterrupt
        return original(frame, path, *args, **kwargs)

    monkeypatch.setattr(pd.DataFrame, "to_csv", interrupted)
    with pytest.raises(SystemExit) as raised:  # the command line's exit status for Ctrl-C
        _explain(tmp_path, out, "S000")
    assert raised.value.code == 130
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["history.csv", "model"]
    monkeypatch.setattr(pd.DataFrame, "to_csv", original)
    assert _explain(tmp_path, out, "S000") == 0
    assert {"attention.csv", "attention_profile.png", "forecasts.png"} <= {p.name for p in out.iterdir()}
