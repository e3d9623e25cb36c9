"""report.html is report.md rendered (nothing dropped, no Markdown left over), and the report's views are right."""

from __future__ import annotations

import copy
import dataclasses
import re
from html.parser import HTMLParser
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from conftest import fast_model

import forecaster
from forecaster.datasets import make_panel
from forecaster.evaluation.analysis import per_fold
from forecaster.evaluation.report_html import render_html
from forecaster.evaluation.report_tables import (
    calibration_by_fold,
    coverage_warning,
    hit_rate_warning,
    label,
    markdown_table,
    pick_folds,
    representative_series,
)
from forecaster.plots import readable

VOID = {"img", "br", "wbr", "hr", "meta", "link", "input"}
CAPTURED = {"h1", "h2", "h3", "h4", "p", "li", "th", "td", "blockquote", "code", "strong", "title"}


class Page(HTMLParser):
    """What a reader sees of a page: headings, paragraphs, list items, tables (rows of cells), images, text nodes."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, dict]] = []
        self.open: list[list] = []  # [tag, text] being captured
        self.found: dict[str, list[str]] = {tag: [] for tag in CAPTURED}
        self.headings: list[tuple[str, str]] = []
        self.tables: list[dict] = []
        self.images: list[dict] = []
        self.texts: list[tuple[str, tuple[str, ...]]] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "img":
            self.images.append({**attrs, "parent": self.stack[-1] if self.stack else ("", {})})
        if tag == "table":
            parent = self.stack[-1] if self.stack else ("", {})
            heading = self.headings[-1][1] if self.headings else ""
            self.tables.append({"rows": [], "parent": parent, "heading": heading})
        if tag == "tr":
            self.tables[-1]["rows"].append([])
        if tag in ("th", "td"):
            self.tables[-1]["rows"][-1].append([tag, ""])
        if tag in CAPTURED:
            self.open.append([tag, ""])
        if tag not in VOID:
            self.stack.append((tag, attrs))

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()[0] == tag:
                break
        if tag in CAPTURED and self.open and self.open[-1][0] == tag:
            _, text = self.open.pop()
            text = " ".join(text.split())
            self.found[tag].append(text)
            if tag in ("h1", "h2", "h3", "h4"):
                self.headings.append((tag, text))
            if tag in ("th", "td"):
                self.tables[-1]["rows"][-1][-1][1] = text

    def handle_data(self, data):
        if data.strip():
            self.texts.append((data, tuple(t for t, _ in self.stack)))
        for record in self.open:
            record[1] += data

    def table(self, heading: str) -> list[list[str]]:
        """The rows (cell texts) of the first table under a heading starting with ``heading``."""
        table = next(t for t in self.tables if t["heading"].startswith(heading))
        return [[text for _, text in row] for row in table["rows"]]


def plain(markdown: str) -> str:
    """The text a reader sees of a line of Markdown (code spans, emphasis, escapes and block marks removed)."""
    text = re.sub(r"^(#+ |- |> )", "", markdown.strip())
    text = re.sub(r"`+ ?(.*?) ?`+", r"\1", text).replace("**", "").replace("\\|", "|")
    return " ".join(re.sub(r"(?<!\w)\*(\S.*?\S)\*(?!\w)", r"\1", text).split())


def blocks(markdown: str) -> list[list[str]]:
    return [block.splitlines() for block in re.split(r"\n\s*\n", markdown) if block.strip()]


@pytest.fixture(scope="module")
def result():
    df, _ = make_panel(n_series=6, length=48, short_share=0.0, missing_share=0.0)
    return forecaster.backtest(fast_model(), df, n_windows=2, baselines=("seasonal_naive", "auto_ets"), progress=False)


def write(result, folder: Path) -> tuple[str, Page]:
    result.to_report(folder, title="Tiny backtest")
    plt.close("all")
    return (folder / "report.md").read_text(encoding="utf-8"), Page((folder / "report.html").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def report(result, tmp_path_factory):
    return write(result, tmp_path_factory.mktemp("report") / "r")


def mean_mase(result) -> pd.DataFrame:
    """Per series and model, the mean MASE over the folds every model scored (computed here, from metrics)."""
    wide = result.metrics.pivot_table(index=["unique_id", "cutoff"], columns="model", values="mase").dropna()
    return wide.groupby(level="unique_id").mean()


def test_html_holds_every_heading_paragraph_bullet_table_row_and_image_of_the_markdown(report):
    text, page = report
    headings = [plain(line) for block in blocks(text) for line in block if re.match(r"#{1,4} ", line)]
    assert [h for _, h in page.headings] == headings
    assert {"Forecasts against actuals", "Summary", "Per fold", "Against AutoETS", "Model settings", "Glossary"} <= set(headings)
    tables = [block for block in blocks(text) if block[0].startswith("|")]
    assert len(page.tables) == len(tables) >= 6
    for md_table, html_table in zip(tables, page.tables, strict=True):
        assert len(html_table["rows"]) == len(md_table) - 1  # the `|---|` rule is no row
        header = [plain(c) for c in re.split(r"(?<!\\)\|", md_table[0].strip("| "))]
        assert [cell for _, cell in html_table["rows"][0]] == header
        assert [plain(c) for c in re.split(r"(?<!\\)\|", md_table[-1].strip()[1:-1])] == [c for _, c in html_table["rows"][-1]]
    bullets = [plain(line) for block in blocks(text) for line in block if line.startswith("- ")]
    assert page.found["li"] == bullets and len(bullets) >= 12
    seen = " ".join(" ".join(page.found[tag]) for tag in ("p", "li", "blockquote"))
    for block in blocks(text):
        if not block[0].startswith(("#", "|", "- ", "![")):
            assert plain(" ".join(block)) in seen, block  # paragraphs and block quotes
    alts = [m for block in blocks(text) for m in re.findall(r"!\[(.*?)\]\((.*?)\)", " ".join(block))]
    assert [(i["alt"], i["src"][:22]) for i in page.images] == [(alt, "data:image/png;base64,") for alt, _ in alts]


def test_html_leaves_no_markdown_as_text_and_every_table_scrolls_in_its_own_box(report):
    _, page = report
    for data, _ in page.texts:
        assert "`" not in data and "**" not in data and "|---" not in data, data
        assert not data.lstrip().startswith(("- ", "> ", "#")), data
    assert page.found["blockquote"], "the attention note and the coverage warning are block quotes"
    for table in page.tables:
        tag, attrs = table["parent"]
        assert tag == "div" and "overflow-x:auto" in attrs.get("style", "").replace(" ", "")


def test_figures_keep_a_readable_width_on_a_narrow_page_and_scroll_in_their_own_box(report):
    """At 640 px a 1100 px figure shrank with the page until its legends and axes were unreadable."""
    import base64

    from forecaster.evaluation.report_html import MIN_FIGURE_WIDTH

    _, page = report
    assert len(page.images) >= 4
    for image in page.images:
        data = base64.b64decode(image["src"].split(",", 1)[1])
        width = int.from_bytes(data[16:20], "big")  # the PNG's own pixel width
        assert image["style"].replace(" ", "") == f"min-width:{min(width, MIN_FIGURE_WIDTH)}px"
        tag, attrs = image["parent"]
        assert tag == "span" and "overflow-x:auto" in attrs.get("style", "").replace(" ", "")
    assert any(int.from_bytes(base64.b64decode(i["src"].split(",", 1)[1])[16:20], "big") > MIN_FIGURE_WIDTH for i in page.images)


def test_tables_have_one_header_row_and_no_index_name_row(report, result):
    _, page = report
    for table in page.tables:
        kinds = [{tag for tag, _ in row} for row in table["rows"]]
        assert kinds[0] == {"th"} and all(kind == {"td"} for kind in kinds[1:]), table["heading"]
        assert all(text for _, text in table["rows"][0]), "an empty header cell (pandas' index-name row has them)"
    summary = page.table("Summary")
    assert summary[0][0] == "model" and [row[0] for row in summary[1:]] == [label(m) for m in result.models]


def test_per_fold_table_has_a_row_per_fold_and_model_with_its_mean_mase(report, result):
    _, page = report
    rows = page.table("Per fold")
    header, body = rows[0], rows[1:]
    assert header[:4] == ["fold", "cutoff", "model", "mean_mase"] and "coverage" in header
    n_folds = result.settings["n_windows"]
    assert len(body) == n_folds * len(result.models) == 6
    assert sorted((r[0], r[2]) for r in body) == sorted((str(f), m) for f in range(1, n_folds + 1) for m in result.models)
    expected = result.metrics.groupby(["cutoff", "model"])["mase"].mean()
    for fold, cutoff, model, mase, *_ in body:
        assert cutoff == result.settings["cutoffs"][int(fold) - 1]
        assert float(mase) == pytest.approx(expected[(pd.Timestamp(cutoff), model)], abs=5e-4)


def test_leaderboard_and_picks_follow_the_mase_difference_to_auto_ets(report, result):
    text, page = report
    means = mean_mase(result)
    difference = means["seq2seq"] - means["auto_ets"]
    losses, gains = page.table("Where seq2seq loses most to AutoETS")[1:], page.table("Where seq2seq beats AutoETS most")[1:]
    assert losses and len(losses) + len(gains) == (difference != 0).sum()  # 6 series: every one is in one of them
    for uid, s2s, ets, diff, ratio, n_folds in losses:
        assert means.loc[uid, "seq2seq"] > means.loc[uid, "auto_ets"], uid
        assert [float(s2s), float(ets)] == pytest.approx([means.loc[uid, "seq2seq"], means.loc[uid, "auto_ets"]], abs=5e-4)
        assert float(diff) == pytest.approx(difference[uid], abs=5e-4) and float(ratio) > 1 and n_folds == "2"
    for uid, *_ in gains:
        assert means.loc[uid, "seq2seq"] < means.loc[uid, "auto_ets"], uid
    assert [row[0] for row in losses] == list(difference[difference > 0].sort_values(ascending=False).index)
    own = result.metrics[result.metrics["model"] == "seq2seq"].groupby("unique_id")["mase"].mean().sort_values()
    picks = representative_series(result.metrics)
    assert picks == {"best": own.index[0], "median": own.index[len(own) // 2], "worst": own.index[-1]}
    assert f"### Forecast: worst series (`{own.index[-1]}`)" in text
    assert f"highest seq2seq mean MASE over its folds ({readable(own.iloc[-1])} over 2)" in text  # the reason, stated


def test_without_auto_ets_the_leaderboard_is_against_the_first_baseline_and_says_so(result, tmp_path):
    metrics = result.metrics[result.metrics["model"] != "auto_ets"]
    settings = {**result.settings, "baselines": ["seasonal_naive"]}
    text, page = write(dataclasses.replace(result, metrics=metrics, settings=settings), tmp_path / "r")
    assert "AutoETS is not among the baselines: against seasonal naive (`seasonal_naive`), the first baseline." in text
    assert "Against seasonal naive" in [h for _, h in page.headings]
    header, *losses = page.table("Where seq2seq loses most to seasonal naive")
    assert losses and header[1:3] == ["seq2seq_mase", "seasonal_naive_mase"]
    for _, s2s, naive, *_ in losses:
        assert float(s2s) > float(naive)


@pytest.mark.parametrize(
    "coverage, warned",
    [(0.746, "covered 74.6% of a series' actuals on average (nominal 80%); it is too narrow"), (0.8, None)],
)
def test_coverage_warning_appears_exactly_when_coverage_is_outside_the_band(result, tmp_path, coverage, warned):
    metrics = result.metrics.copy()
    metrics.loc[metrics["model"] == "seq2seq", "coverage"] = coverage
    # Without the per-level scores: this test is about the interval's coverage alone.
    text, page = write(dataclasses.replace(result, metrics=metrics, quantile_metrics=None), tmp_path / "r")
    warnings = [b for b in page.found["blockquote"] if b.startswith("Warning:") and "interval covered" in b]
    assert text.count("> **Warning:** the 10-90% interval") == len(warnings) == (1 if warned else 0)
    if warned:
        assert f"> **Warning:** the 10-90% interval {warned}" in text and warned in warnings[0]
        assert "Warning:" in page.found["strong"]  # shown in bold, not as `**`


def test_levels_whose_hit_rate_is_off_by_more_than_three_points_are_named():
    rates = pd.DataFrame({0.1: [0.129, 0.05], 0.5: [0.531, 0.5], 0.9: [0.871, 0.95]}, index=["seq2seq", "auto_ets"])
    assert "(q50 hit 53.1%)" in hit_rate_warning(rates)  # 2.9, 3.1 and 2.9 points off: q50 alone is flagged
    rates.loc["seq2seq", 0.5] = 0.529
    assert hit_rate_warning(rates) is None  # the baseline's levels are shown, not flagged
    rates.loc["seq2seq", 0.9] = 0.86
    warning = hit_rate_warning(rates)
    assert "1 of the model's 3 quantile levels" in warning and "q90 hit 86.0%" in warning and "q10" not in warning


def test_the_report_shows_wql_hit_rates_and_the_calibration_plot(report, result):
    assert report[0].splitlines()[2].startswith("**In short:**")
    text, page = report
    assert "## Forecast distribution" in text and "calibration.png" in text
    header, *rows = page.table("Forecast distribution")
    assert header[-1] == "WQL" and {r[0] for r in rows} == set(result.models)


def test_hit_rates_by_fold_are_each_folds_share_of_actuals_at_or_below_the_quantile(report, result):
    by_fold = result.calibration(by="fold")
    assert list(by_fold.index.names) == ["model", "fold"] and set(by_fold.index.get_level_values("fold")) == {1, 2}
    forecasts = result.forecasts
    first = sorted(forecasts["cutoff"].unique())[0]
    for model, column in (("seq2seq", "seq2seq_q10"), ("auto_ets", "auto_ets_q90")):
        rows = forecasts[(forecasts["cutoff"] == first) & forecasts[column].notna() & forecasts["y"].notna()]
        assert by_fold.loc[(model, 1), 0.1 if column.endswith("10") else 0.9] == pytest.approx((rows["y"] <= rows[column]).mean())
    table = calibration_by_fold(by_fold, per_fold(result.metrics, result.models, 2))
    header, *rows = report[1].table("Calibration by fold")
    assert header == ["fold", "model", "coverage", "worst_level", "off_points"] and len(rows) == len(table)
    assert rows[0][:2] == ["1", "seq2seq"] and rows[-1][0] == "2"
    with pytest.raises(ValueError, match="`by` must be None or 'fold'"):
        result.calibration(by="cutoff")


def test_calibration_by_fold_reads_the_worst_level_whatever_the_column_order_and_the_per_fold_coverage():
    index = pd.MultiIndex.from_tuples([("seq2seq", 1), ("seq2seq", 2)], names=["model", "fold"])
    rates = pd.DataFrame({0.9: [0.8, 0.93], 0.1: [0.25, 0.12], 0.5: [0.5, 0.44]}, index=index)
    coverage = pd.DataFrame({"fold": [2, 1], "model": "seq2seq", "coverage": [0.83, 0.61]})
    table = calibration_by_fold(rates, coverage)
    assert table["coverage"].tolist() == pytest.approx([0.61, 0.83])  # the share inside, not q90's hit rate less q10's
    assert table["worst_level"].tolist() == ["q10", "q50"] and table["off_points"].tolist() == pytest.approx([15.0, 6.0])
    assert calibration_by_fold(rates)["coverage"].isna().all()


def test_a_report_counts_coverage_one_way_and_ties_at_a_quantile_as_a_share_of_a_hit():
    """Hours closed at night, forecast at zero at every level and zero: inside the interval and at or below every
    quantile. "Calibration by fold" took its coverage as q90's hit rate less q10's, and showed 0.385 where the per-fold
    table showed 0.885 for the same fold; the hit rates counted every closed hour at every level (q10 hit 66.7%)."""
    from forecaster.evaluation.report_sections import calibration_by_fold_lines

    rng = np.random.default_rng(0)
    hours = pd.date_range("2024-03-04", periods=21 * 24, freq="h")
    open_ = ((hours.hour >= 8) & (hours.hour < 20)).astype(float)
    df = pd.concat(
        [
            pd.DataFrame({"unique_id": s, "ds": hours, "open": open_, "y": rng.poisson(open_ * (6 + 4 * k)).astype(float)})
            for k, s in enumerate("abc")
        ],
        ignore_index=True,
    )
    model = forecaster.Seq2SeqForecaster(24, future_covariates=["open"], max_steps=20, progress=False, num_threads=1)
    result = forecaster.backtest(model, df, n_windows=2, baselines=("seasonal_naive",), progress=False)
    f = result.forecasts
    levels = [c for c in f.columns if c.startswith("seq2seq_q")]
    closed = (f["y"] == 0) & (f[levels] == 0).all(axis=1)
    assert closed.sum() > 0.3 * len(f)  # the closure was learnt: a third of the hours at least
    lines = "\n".join(calibration_by_fold_lines(result))
    shown = per_fold(result.metrics, result.models, 2)
    for fold, cov in shown[shown["model"] == "seq2seq"][["fold", "coverage"]].itertuples(index=False):
        assert f"| {fold} | seq2seq | {readable(cov)} |" in lines
    # a closed hour, equal to every quantile, counts each level's own share: 0.1 at q10, not a whole hit
    scored = f[f["y"].notna()]
    rest = scored[~closed[f["y"].notna()]]
    share = (closed.sum() * 0.1 + (rest["y"] <= rest["seq2seq_q10"]).sum()) / len(scored)
    assert result.calibration().loc["seq2seq", 0.1] == pytest.approx(share, abs=0.01)


def test_a_count_at_zero_equal_to_the_lowest_quantiles_is_a_share_of_a_hit_at_each():
    """A product selling nothing half the days: its 10-50% quantiles are zero, as a calibrated forecast's are. Counted
    at or below, every zero was a hit at each of them (q10 "hit" 47%), and the report warned of badly wrong levels."""
    from forecaster.evaluation.metrics import hit_shares

    levels = np.round(np.arange(1, 10) / 10, 1)
    rng = np.random.default_rng(0)
    y = np.where(rng.random(20_000) < 0.5, 0.0, rng.integers(1, 9, 20_000).astype(float))  # zero half the time
    truth = np.quantile(y, levels, method="inverted_cdf")  # the calibrated forecast's quantiles
    shares = hit_shares(y, np.tile(truth, (len(y), 1)), levels)
    np.testing.assert_allclose(shares.mean(axis=0), levels, atol=0.06)
    assert ((y[:, None] <= truth).mean(axis=0)[0]) > 0.45  # "at or below": q10 hit half the time


def test_folds_are_counted_per_series_when_series_end_at_different_dates():
    df, _ = make_panel(n_series=6, length=48, short_share=0.0, missing_share=0.0)
    ids = sorted(df["unique_id"].unique())
    ends = df.groupby("unique_id")["ds"].transform("max")
    df = df[~(df["unique_id"].isin(ids[:3]) & (df["ds"] > ends - pd.DateOffset(months=2)))]  # half end 2 months early
    result = forecaster.backtest(fast_model(quantiles=[0.1, 0.9]), df, n_windows=2, baselines=(), progress=False)
    assert result.forecasts.groupby("unique_id")["cutoff"].nunique().eq(2).all() and result.forecasts["cutoff"].nunique() == 4
    by_fold = result.calibration(by="fold")
    assert by_fold.index.tolist() == [("seq2seq", 1), ("seq2seq", 2)]
    last = result.forecasts[result.forecasts["cutoff"] == result.forecasts.groupby("unique_id")["cutoff"].transform("max")]
    assert by_fold.loc[("seq2seq", 2), 0.9] == pytest.approx((last["y"] <= last["seq2seq_q90"]).mean())
    assert result.calibration().columns.tolist() == [0.1, 0.5, 0.9]


def test_coverage_band_is_the_nominal_level_of_the_outermost_quantiles():
    assert coverage_warning(0.771, (0.1, 0.5, 0.9)) is None and coverage_warning(0.829, (0.9, 0.1)) is None
    assert "too narrow" in coverage_warning(0.769, (0.1, 0.5, 0.9)) and "too wide" in coverage_warning(0.831, (0.1, 0.9))
    assert coverage_warning(0.88, (0.05, 0.5, 0.95)) is None  # nominal 90%
    assert "the 5-95% interval covered 80.0% of a series' actuals on average (nominal 90%)" in coverage_warning(
        0.8, (0.05, 0.5, 0.95)
    )
    assert coverage_warning(0.2, (0.5,)) is None and coverage_warning(float("nan"), (0.1, 0.9)) is None


def test_model_settings_are_a_table_with_the_fitted_frequency_and_season(report, result):
    text, page = report
    assert result.settings["model_params"]["freq"] is None and result.settings["model_params"]["season_length"] is None
    rows = dict(page.table("Model settings")[1:])
    assert rows["freq"] == f"{result.last_model.state_.freq} (inferred)" == "MS (inferred)"
    assert rows["season_length"] == "12 (inferred)" and rows["input_size"] == "12"
    assert rows["theta_weight"] == f"{result.settings['blend_weights']['theta_weight']:g} (resolved)"
    assert "progress" not in rows and "model: seq2seq with" not in text  # no one-line dump


def test_ids_in_tables_are_literal_whatever_they_hold(tmp_path):
    ids = ["a|b", "x`y", "<b>bold</b>", "*em*", "$1 to $2", "back\\|slash"]
    frame = pd.DataFrame({"unique_id": ids, "difference": [0.5, -1.0, 2.0, 0.0, 1.5, 3.0]})
    page = Page(render_html(markdown_table(frame, code=("unique_id",)), tmp_path, [], "<title>"))
    rows = page.tables[0]["rows"]
    assert [[text for _, text in row] for row in rows[1:]] == [
        [uid, readable(d)] for uid, d in zip(ids, frame["difference"], strict=True)
    ]
    assert page.found["title"] == ["<title>"] and not page.found["code"][0].startswith("<")


def test_best_and_worst_are_picked_by_the_models_own_mase_and_drawn_on_their_best_and_worst_folds():
    """The series shown as best had MASE 6.5 (best only against AutoETS); the worst was drawn on a good fold."""
    # A has the highest seq2seq MASE but beats AutoETS by far; B has a middling MASE and loses most.
    mase = {"A": (3.0, 5.0), "B": (1.5, 0.5), "C": (0.2, 0.4), "D": (1.0, 1.1), "E": (0.1, 0.05)}
    days = ("2020-01-01", "2020-02-01", "2020-03-01")
    rows = [
        {"unique_id": uid, "cutoff": pd.Timestamp(day), "model": model, "mase": value * (1 + 0.1 * (i == 1) - 0.1 * (i == 2))}
        for uid, pair in mase.items()
        for i, day in enumerate(days)
        for model, value in zip(("seq2seq", "auto_ets"), pair, strict=True)
    ]
    metrics = pd.DataFrame(rows)
    picks = representative_series(metrics)
    assert picks == {"best": "E", "median": "D", "worst": "A"}
    folds = pick_folds(metrics, picks)
    assert folds["worst"][0] == pd.Timestamp(days[1]) and folds["worst"][1] == pytest.approx(3.3)  # its worst fold
    assert folds["best"][0] == pd.Timestamp(days[2]) and folds["best"][1] == pytest.approx(0.09)  # its best fold
    assert folds["median"][0] == pd.Timestamp(days[2])  # the last fold: the one whose attention is kept
    assert representative_series(metrics[metrics["model"] == "seq2seq"]) == picks  # with or without a baseline


def test_the_attention_maps_of_a_report_share_one_colour_scale(monkeypatch, tmp_path):
    from forecaster.evaluation import report as report_module

    seen = []
    original = report_module.plot_attention

    def spy(*args, **kwargs):
        seen.append(kwargs.get("vmax"))
        return original(*args, **kwargs)

    monkeypatch.setattr(report_module, "plot_attention", spy)
    df, _ = make_panel(n_series=6, length=48, seed=3, short_share=0.0, missing_share=0.0)
    result = forecaster.backtest(fast_model(), df, n_windows=1, baselines=("seasonal_naive",), progress=False)
    result.to_report(tmp_path / "r")
    assert len(seen) >= 2 and len(set(seen)) == 1 and seen[0] is not None
    shown = result.attention[~result.attention["padded"]]
    assert seen[0] <= shown["weight"].max() + 1e-12


def test_a_title_is_shown_as_words_never_as_markup(result, tmp_path):
    """A spec's title became an external <img> in the self-contained page, and a newline started a heading."""
    title = "Q3 review ![t](http://attacker.example/t.png)\n# injected <b>bold</b>"
    result.to_report(tmp_path / "r", title=title)
    page = (tmp_path / "r" / "report.html").read_text()
    assert not any("attacker" in tag for tag in re.findall(r"<img[^>]*>", page))
    assert "<h1>injected" not in page and "<b>bold</b>" not in page
    markdown = (tmp_path / "r" / "report.md").read_text()
    assert markdown.splitlines()[0].startswith("# Q3 review \\!\\[t\\]")
    assert sum(line.startswith("# ") for line in markdown.splitlines()) == 1
    result.to_report(tmp_path / "plain", title="CSV example: store sales, 2024.")  # nothing to escape: read as written
    assert (tmp_path / "plain" / "report.md").read_text().splitlines()[0] == "# CSV example: store sales, 2024."


def test_ids_that_start_like_a_formula_reach_the_csvs_as_text(tmp_path):
    df, _ = make_panel(n_series=4, length=40, seed=2, static=False)
    names = dict(zip(sorted(df["unique_id"].unique()), ["=HYPERLINK(1)", "+1", "-cmd", "@SUM(A1)"], strict=True))
    df = df.assign(unique_id=df["unique_id"].map(names))
    hostile = forecaster.backtest(fast_model(), df, n_windows=1, baselines=("seasonal_naive",), progress=False)
    hostile.to_report(tmp_path / "r")
    for name in ("metrics.csv", "forecasts.csv"):
        ids = set(pd.read_csv(tmp_path / "r" / name)["unique_id"])
        assert ids == {"'" + v for v in names.values()}
    # The result itself keeps the ids as they are.
    assert set(hostile.forecasts["unique_id"]) == set(names.values())


def test_the_summary_speaks_words_with_the_comparison_first_and_the_csv_keeps_the_names(report, result, tmp_path):
    """Metric columns carried raw names (rel_mase_vs_seasonal_naive, n_zero_scale) where a planner needs words."""
    _, page = report
    header = page.table("Summary")[0]
    assert header[:3] == ["model", "mean MASE", "MASE / AutoETS"]
    assert "rel_mase_vs_auto_ets" not in header and "n_zero_scale" not in header and "zero-scale" in header
    result.to_report(tmp_path / "r")
    assert "rel_mase_vs_auto_ets" in pd.read_csv(tmp_path / "r" / "summary.csv").columns


def test_a_series_that_is_two_picks_is_plotted_once(result, tmp_path, monkeypatch):
    """When the best and the median series were the same series, its plots appeared twice."""
    from forecaster.evaluation import report as report_module

    first = result.metrics["unique_id"].iloc[0]
    monkeypatch.setattr(
        report_module, "representative_series", lambda metrics, reference=None: {"best": first, "median": first, "worst": first}
    )
    result.to_report(tmp_path / "r")
    markdown = (tmp_path / "r" / "report.md").read_text()
    assert markdown.count("### Forecast:") == 1 and "It is also the median series. It is also the worst series." in markdown
    assert not (tmp_path / "r" / "forecast_median.png").exists()


def test_the_settings_table_shows_what_the_forecast_is_and_what_was_changed_and_the_csv_has_all(report, result, tmp_path):
    """The settings table was 37 rows at the top level of the report."""
    _, page = report
    rows = dict(page.table("Model settings")[1:])
    assert {"horizon", "freq", "season_length", "input_size", "quantiles", "init"} <= set(rows)
    assert rows["hidden_size"] == "16" and rows["max_steps"] == "20"  # given other values than the defaults
    assert rows["n_models"] == "1 (resolved)"  # None: the members it trained, from scratch one
    # How the fit started: a report of a prior-served panel and of a scratch fit read the same "auto" before.
    assert rows["init"] == "scratch (the last fit started from scratch, at most 20 training steps)"
    assert "cell" not in rows and "scaler" not in rows and "id_col" not in rows  # at their defaults
    assert len(rows) < 20
    result.to_report(tmp_path / "r")
    every = pd.read_csv(tmp_path / "r" / "settings.csv")
    assert {"cell", "scaler", "hidden_size", "freq"} <= set(every["parameter"])
    assert every.set_index("parameter").loc["freq", "value"] == "MS (inferred)"


def test_the_settings_say_the_model_is_floored_at_zero_and_the_baselines_are_not(report, result):
    """A count panel's verdict compared a model floored at zero with baselines forecasting below zero, without a word."""
    from forecaster.evaluation.report_settings import settings_lines

    lines = settings_lines(result)
    assert any(line.startswith("- zero floor: seq2seq's median and quantiles are floored at zero") for line in lines)
    model = copy.deepcopy(result.last_model)
    model.state_ = dataclasses.replace(model.state_, nonnegative="none")  # as a fit with nonnegative=False resolves it
    unfloored = dataclasses.replace(result, last_model=model)
    assert not any(line.startswith("- zero floor") for line in settings_lines(unfloored))


def test_a_report_into_an_existing_folder_is_staged_inside_it_so_it_never_moves_files_across_file_systems(
    result, tmp_path, monkeypatch
):
    """Staged beside the folder, a report into a mount point (a container's volume) failed at its last step with
    "Invalid cross-device link", and one into a folder whose parent is read-only could not start."""
    import errno
    import os

    from forecaster.evaluation import staged_folder

    target = (tmp_path / "volume").resolve()
    target.mkdir()
    (target / "notes.txt").write_text("mine")
    real_replace = os.replace

    def replace_on_one_device(src, dst):  # the volume is a file system of its own
        if (Path(src).resolve().is_relative_to(target)) != (Path(dst).resolve().is_relative_to(target)):
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        return real_replace(src, dst)

    monkeypatch.setattr(staged_folder.os, "replace", replace_on_one_device)
    result.to_report(target)
    assert (target / "report.html").stat().st_size > 0 and (target / "notes.txt").read_text() == "mine"
    assert not [p for p in target.iterdir() if p.name.startswith(".")]  # no staging folder left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["volume"]


def test_the_first_lines_state_the_nominal_coverage_of_the_quantiles_asked_for(tmp_path):
    """With quantiles 0.025 and 0.975 the first lines said "nominal 80% by default" above a warning saying 95%."""
    df, _ = make_panel(n_series=4, length=48, short_share=0.0, missing_share=0.0, static=False)
    model = fast_model(quantiles=[0.025, 0.5, 0.975])
    backtested = forecaster.backtest(model, df[["unique_id", "ds", "y"]], n_windows=1, baselines=("seasonal_naive",))
    backtested.to_report(tmp_path / "r")
    first_lines = (tmp_path / "r" / "report.md").read_text().split("## ")[0]
    assert "(2.5-97.5%, nominal 95%)" in first_lines and "nominal 80%" not in first_lines


def test_a_verdict_against_an_autoets_that_could_not_fit_the_season_says_so(tmp_path):
    """On weekly data (season 52) statsforecast's AutoETS fits no season (none longer than 24), and the verdict
    against it read as one against a seasonal model, without a word."""
    weeks = pd.date_range("2020-01-05", periods=130, freq="W-SUN")
    rng = np.random.default_rng(0)
    df = pd.concat(
        pd.DataFrame(
            {"unique_id": f"s{i}", "ds": weeks, "y": 50 + 10 * np.sin(2 * np.pi * np.arange(130) / 52) + rng.normal(0, 1, 130)}
        )
        for i in range(3)
    )
    with pytest.warns(UserWarning, match="AutoETS was fitted without a season"):
        weekly = forecaster.backtest(fast_model(), df, n_windows=1, baselines=("auto_ets",))
    weekly.to_report(tmp_path / "r")
    text = (tmp_path / "r" / "report.md").read_text()
    first_lines, settings = text.split("## ")[0], text.split("## Settings and method")[-1]
    note = "AutoETS was fitted without a season: statsforecast's ETS fits none longer than 24 periods (the season here is 52)"
    assert note in first_lines and note in settings


def test_no_note_on_autoets_where_it_fits_the_season(result, report):
    assert "fitted without a season" not in report[0]


def test_fold_cutoffs_read_in_one_format():
    """Ragged cutoffs read "2024-08-25 .. 2024-11-03 00:00:00": a date, then a timestamp."""
    from forecaster.evaluation.scoring import describe_cutoffs

    days = pd.Series(pd.to_datetime(["2024-08-25", "2024-11-03"]))
    assert describe_cutoffs(days) == "2024-08-25 .. 2024-11-03"
    hours = pd.Series(pd.to_datetime(["2024-08-25 00:00", "2024-08-25 13:00"]))
    assert describe_cutoffs(hours) == "2024-08-25 00:00:00 .. 2024-08-25 13:00:00"
    assert describe_cutoffs(days.iloc[:1]) == "2024-08-25"


def test_one_origin_is_one_origin(result):
    from forecaster.evaluation.report_settings import settings_lines

    one = dataclasses.replace(result, settings={**result.settings, "n_windows": 1})
    assert any(line.startswith("- folds: 1 origin, ") for line in settings_lines(one))


def test_the_verdict_line_says_why_points_of_scored_windows_are_not_scored():
    """ "29 of 30 forecast points ...; nothing is left out" read as a contradiction: the point had no actual."""
    from forecaster.evaluation.report_text import verdict_line

    verdict = {"series": 5, "series_total": 5, "points": 29, "points_total": 30, "windows": 5, "windows_total": 5}
    line = verdict_line(verdict, pd.DataFrame(columns=["unique_id", "fold", "reason"]))
    assert line == "Every one of the 5 series-fold windows is scored; 1 forecast point had no actual to score against."
    whole = verdict_line({**verdict, "points": 30}, pd.DataFrame(columns=["unique_id", "fold", "reason"]))
    assert whole == "Every one of the 5 series-fold windows is scored."  # the first sentence names series and points


def test_the_settings_say_a_fit_started_from_the_shipped_prior(tmp_path):
    df, _ = make_panel(n_series=6, length=48, short_share=0.0, missing_share=0.0, static=False)
    served = forecaster.backtest(
        forecaster.Seq2SeqForecaster(horizon=6, progress=False), df[["unique_id", "ds", "y"]], n_windows=1, baselines=()
    )
    from forecaster.evaluation.report_tables import settings_table

    rows = dict(settings_table(served).to_numpy().tolist())
    assert rows["`init`"] == "`auto` (the last fit started from the shipped monthly prior, no training step)"


def test_the_overview_ticks_fall_on_the_calendar(result, tmp_path, monkeypatch):
    """Its date axis took four evenly spaced ticks: 1992-12-31 and 1994-08-23 on quarterly data."""
    import matplotlib.dates as mdates

    from forecaster.evaluation import report_plots

    ticks, real_save = [], report_plots.save

    def noting_ticks(fig, folder, name):
        if name == "forecast_overview.png":
            fig.canvas.draw()
            ticks.extend(mdates.num2date(t) for t in fig.axes[0].get_xticks())
        return real_save(fig, folder, name)

    monkeypatch.setattr(report_plots, "save", noting_ticks)
    result.to_report(tmp_path / "r")
    assert ticks and all(t.day == 1 and t.hour == 0 for t in ticks), ticks


def test_a_verdict_carried_by_closed_periods_says_so_and_compares_the_open_ones(tmp_path):
    """On a call centre closed at night the report read 26.7% better than MSTL; on the open hours it was 8% worse, and
    the report never mentioned the closed periods the baselines cannot see."""
    rng = np.random.default_rng(0)
    days = pd.date_range("2023-01-01", periods=120, freq="D")
    open_ = (days.dayofweek != 6).astype(float)
    df = pd.concat(
        pd.DataFrame({"unique_id": f"s{i}", "ds": days, "y": open_ * rng.poisson(20 + 5 * i, 120), "open": open_})
        for i in range(4)
    )
    model = fast_model(horizon=7, input_size=14, future_covariates=["open"])
    result = forecaster.backtest(model, df, n_windows=2, step_size=7, baselines=("seasonal_naive",))
    assert result.last_model.closed_when_ == {"open": [0.0]}
    result.to_report(tmp_path / "r")
    text = (tmp_path / "r" / "report.md").read_text()
    first_lines, settings = text.split("## ")[0], text.split("## Settings and method")[-1]
    scored = result.forecasts.dropna(subset=["y"])
    closed, open_rows = scored[scored["ds"].dt.dayofweek == 6], scored[scored["ds"].dt.dayofweek != 6]
    ratio = (open_rows["y"] - open_rows["seq2seq"]).abs().mean() / (open_rows["y"] - open_rows["seasonal_naive"]).abs().mean()
    expected = f"{len(closed):,} of {len(scored):,} scored forecast points fall on periods seq2seq reads as closed "
    expected += "(open = 0: `closed_when`)"
    assert expected in first_lines and expected in settings
    assert f"{abs(1 - ratio) * 100:.1f}% {'lower' if ratio < 1 else 'higher'} than seasonal naive's" in first_lines
    # The interval on the open points alone: the closed ones, forecast at zero at every level, count a share anywhere.
    held = ((open_rows["y"] >= open_rows["seq2seq_q10"]) & (open_rows["y"] <= open_rows["seq2seq_q90"])).mean()
    assert f"and its 10-90% interval held {held * 100:.0f}% of their actuals" in first_lines


def test_the_per_series_figures_say_what_they_draw_and_count_what_lies_off_their_axes(result, report, tmp_path, monkeypatch):
    """The note described a histogram "Right" of the scatter, which was a second scatter (against seasonal naive), and
    points beyond the 98th percentile, or ratios beyond 4x, were drawn at the edge or in the end bins without a word."""
    import matplotlib.axes

    from forecaster.evaluation import report_plots

    titles = []
    monkeypatch.setattr(matplotlib.axes.Axes, "set_title", lambda self, text, *a, **k: titles.append(text))
    metrics = result.metrics.copy()
    one = (metrics["model"] == "seq2seq") & (metrics["unique_id"] == metrics["unique_id"].iloc[0])
    metrics.loc[one, "mase"] = 100.0  # one series far beyond every other
    report_plots.plot_per_series(metrics, ["auto_ets", "seasonal_naive"], tmp_path)
    report_plots.plot_relative(metrics, ["seq2seq"], tmp_path)
    assert sum("1 beyond the axes (on the edge)" in t for t in titles) == 2
    assert any("beyond 4x either way, in the end bins" in t for t in titles)
    markdown, _ = report
    assert "Right: per series and fold" not in markdown and "One panel per baseline" in markdown


def test_a_window_forecast_exactly_is_never_shown_as_the_best():
    """A shop closed all day, forecast at zero throughout (MASE 0), was the report's "best series", drawn on that day."""
    days = [pd.Timestamp("2024-04-05"), pd.Timestamp("2024-04-06")]
    mase = {"closed_then_open": (0.0, 0.9), "shut": (0.0, 0.0), "good": (0.3, 0.4), "bad": (1.5, 2.0)}
    rows = [
        {"unique_id": uid, "cutoff": day, "model": "seq2seq", "mase": value}
        for uid, pair in mase.items()
        for day, value in zip(days, pair, strict=True)
    ]
    metrics = pd.DataFrame(rows)
    picks = representative_series(metrics)
    assert picks["best"] == "good" and "shut" not in picks.values()  # mean 0.35 against closed_then_open's 0.45
    folds = pick_folds(metrics, {"best": "closed_then_open"})
    assert folds["best"] == (days[1], 0.9)  # its scored day, not the closed one
    assert representative_series(metrics[metrics["unique_id"] == "shut"]) == {"best": "shut", "median": "shut", "worst": "shut"}


def test_errors_and_coverage_are_split_by_each_value_of_a_future_known_flag(tmp_path):
    """A pooled coverage of 80% hid an interval that held half the actuals on promotion days; nothing in the report
    split the points by the covariates a planner plans around."""
    rng = np.random.default_rng(1)
    days = pd.date_range("2023-01-01", periods=120, freq="D")
    frames = []
    for i in range(4):
        promo = (rng.random(120) < 0.2).astype(float)
        temperature = rng.normal(15, 5, 120)  # a measurement: not split
        frames.append(pd.DataFrame({"unique_id": f"s{i}", "ds": days, "promo": promo, "temp": temperature}))
    df = pd.concat(frames, ignore_index=True)
    df["y"] = rng.poisson(20 + 25 * df["promo"]).astype(float)
    model = fast_model(horizon=7, input_size=14, future_covariates=["promo", "temp"])
    result = forecaster.backtest(model, df, n_windows=2, step_size=7, baselines=("seasonal_naive",))
    result.to_report(tmp_path / "r")
    table = pd.read_csv(tmp_path / "r" / "by_covariate.csv")
    assert table[["covariate", "value"]].values.tolist() == [["promo", 0.0], ["promo", 1.0]]  # temp has 100s of values
    scored = result.forecasts.dropna(subset=["y"]).merge(df[["unique_id", "ds", "promo"]], on=["unique_id", "ds"])
    on = scored[scored["promo"] == 1]
    row = table[table["value"] == 1].iloc[0]
    assert row["points"] == len(on)
    assert row["mae_seq2seq"] == pytest.approx((on["y"] - on["seq2seq"]).abs().mean())
    assert row["mae_seasonal_naive"] == pytest.approx((on["y"] - on["seasonal_naive"]).abs().mean())
    inside = ((on["y"] >= on["seq2seq_q10"]) & (on["y"] <= on["seq2seq_q90"])).mean()  # counts: no tie at these levels
    assert row["coverage_seq2seq"] == pytest.approx(inside)
    text = (tmp_path / "r" / "report.md").read_text()
    assert "#### By future-known covariate value" in text


def test_a_report_of_a_panel_whose_covariate_is_named_as_a_key_column_is_written(tmp_path):
    """A past covariate named `y` beside a target named `sales` made the report fail in its overview plot (the target,
    renamed to `y`, gave a second `y` column)."""
    df, _ = make_panel(n_series=4, length=40, seed=1, missing_share=0.0)
    renamed = df.rename(columns={"unique_id": "store", "ds": "month", "y": "sales", "traffic": "y"})
    model = fast_model(
        horizon=6, id_col="store", time_col="month", target_col="sales", past_covariates=["y"], future_covariates=["promo"]
    )
    result = forecaster.backtest(model, renamed, n_windows=1, baselines=("seasonal_naive",), progress=False)
    result.to_report(tmp_path / "report")
    assert (tmp_path / "report" / "report.html").is_file()
    assert result.settings["model_params"]["past_covariates"] == ["y"]  # the result itself is left as it was
    written = pd.read_csv(tmp_path / "report" / "forecasts.csv")
    np.testing.assert_allclose(written["y"], result.forecasts["y"])  # the actuals are the target's
