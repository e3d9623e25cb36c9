import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import tomllib
from conftest import fast_model

import forecaster
from forecaster.cli import main
from forecaster.evaluation import studies
from forecaster.evaluation.studies import DATA_KEYS, backtest_keys, model_keys


def test_backtest_command_writes_a_full_report(tmp_path, capsys):
    spec = tmp_path / "tiny.toml"
    spec.write_text(
        'title = "tiny"\n[data]\nloader = "synthetic"\nargs = { n_series = 5, length = 40, seed = 1 }\n'
        "[model]\nhorizon = 6\ninput_size = 12\nhidden_size = 8\nmax_steps = 10\n"
        '[backtest]\nn_windows = 2\nbaselines = ["seasonal_naive", "auto_ets"]\n'
    )
    out = tmp_path / "report"
    assert main(["backtest", str(spec), "--out", str(out), "--quiet"]) == 0
    for name in (
        "report.md",
        "report.html",
        "metrics.csv",
        "forecasts.csv",
        "mase_by_step.png",
        "relative_mase.png",
        "forecast_best.png",
        "forecast_worst.png",
        "attention_best.png",
        "attention_profile.png",
    ):
        assert (out / name).stat().st_size > 0, name
    html = (out / "report.html").read_text()
    assert "data:image/png;base64," in html and 'src="mase_by_step.png"' not in html
    text = (out / "report.md").read_text()
    assert "seed (random_state)" in text and "versions:" in text and "## Attention" in text
    # The synthetic loader declares a future covariate; the blend is chosen on held-out windows all the same.
    assert "chosen at fit on held-out windows" in text
    # The interval treatment is named with every candidate's held-out WQL, the network's own quantiles among them.
    assert "- intervals: " in text and "quantiles unless another treatment" in text and "network 0." in text
    assert "seq2seq" in capsys.readouterr().out


def test_explain_command_plots_a_saved_model(tmp_path, panel):
    df, _ = panel
    model = fast_model().fit(df)
    model.save(tmp_path / "model")
    df.to_csv(tmp_path / "history.csv", index=False)
    assert (
        main(["explain", str(tmp_path / "model"), "--data", str(tmp_path / "history.csv"), "--out", str(tmp_path / "plots")]) == 0
    )
    pngs = list((tmp_path / "plots").glob("attention_*.png"))
    assert len(pngs) >= 2 and all(p.stat().st_size > 0 for p in pngs)
    assert len(pd.read_csv(tmp_path / "plots" / "attention.csv")) > 0


def test_study_spec_can_name_a_csv_with_its_own_column_names(tmp_path):
    from forecaster.datasets import make_panel
    from forecaster.evaluation.studies import run_study

    df, _ = make_panel(n_series=4, length=40, seed=2)
    df.rename(columns={"unique_id": "store", "ds": "month", "y": "sales"}).to_csv(tmp_path / "sales.csv", index=False)
    (tmp_path / "study.toml").write_text(
        '[data]\npath = "sales.csv"\nid_col = "store"\ntime_col = "month"\ntarget_col = "sales"\nfreq = "MS"\n'
        'future_covariates = ["promo"]\n[model]\nhorizon = 6\ninput_size = 12\nhidden_size = 8\nmax_steps = 5\n'
        '[backtest]\nn_windows = 1\nbaselines = ["seasonal_naive"]\n'
    )
    result, spec = run_study(tmp_path / "study.toml", progress=False)
    assert result.settings["model_params"]["future_covariates"] == ["promo"]
    assert set(result.forecasts["unique_id"]) == set(df["unique_id"]) and result.settings["data"] == "sales.csv"
    # The model reads the file under its own names, which the report and every message then use: renamed to
    # unique_id, ds and y, the report described "series id `unique_id`" and errors listed columns the file lacks.
    params = result.settings["model_params"]
    assert (params["id_col"], params["time_col"], params["target_col"]) == ("store", "month", "sales")
    markdown = (Path(result.to_report(tmp_path / "r"))).read_text()
    assert "columns: series id `store`, time `month`, target `sales`" in markdown
    (tmp_path / "typo.toml").write_text((tmp_path / "study.toml").read_text().replace('["promo"]', '["promos"]'))
    with pytest.raises(ValueError, match=r"missing column\(s\) `promos`; it has \['store', 'month', 'sales'"):
        run_study(tmp_path / "typo.toml", progress=False)


# ----------------------------------------------------------------------------- spec errors, versions, CSV columns
REPO = Path(__file__).resolve().parents[1]
TINY_DATA = '[data]\nloader = "synthetic"\nargs = { n_series = 3, length = 30, seed = 1 }\n'


def _fails(capsys, *argv: str) -> str:
    """Run the command, expect a usage error (exit status 2) and return its stderr, which must be one line."""
    with pytest.raises(SystemExit) as raised:
        main(list(argv))
    assert raised.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


@pytest.mark.parametrize(
    "text, named, valid",
    [
        (TINY_DATA + "[backtest]\nwindows = 2\n", ["`windows`", "[backtest]", "did you mean `n_windows`"], backtest_keys()),
        ('[data]\npath = "x.csv"\nfuture_covariate = ["promo"]\n', ["`future_covariate`", "[data]"], DATA_KEYS),
        (TINY_DATA + "[model]\nhidden = 8\n", ["`hidden`", "[model]"], model_keys()),
        ('[data]\nloader = "synthetic"\nargs = { series = 3 }\n', ["`series`", "args of loader 'synthetic'"], ["n_series"]),
        (TINY_DATA + "[modle]\nhorizon = 6\n", ["[modle]", "did you mean [model]"], ["`title`", "[data]", "[backtest]"]),
    ],
)
def test_spec_errors_are_one_line_naming_the_table_and_key_and_listing_the_valid_keys(tmp_path, capsys, text, named, valid):
    (tmp_path / "spec.toml").write_text(text)
    err = _fails(capsys, "backtest", str(tmp_path / "spec.toml"), "--out", str(tmp_path / "out"))
    assert err.startswith("forecaster backtest: error: ")
    assert all(part in err for part in named), err
    assert all(key in err for key in valid), err
    assert not (tmp_path / "out").exists()


def test_spec_keys_are_the_signatures_of_the_model_and_the_backtest():
    assert {"attention_values", "fill_gaps", "horizon", "random_state"} <= set(model_keys()) and "self" not in model_keys()
    assert {"n_windows", "step_size", "refit", "window", "baselines", "n_jobs"} <= set(backtest_keys())
    assert not {"model", "df", "progress"} & set(backtest_keys())


def test_values_refused_while_running_a_spec_are_one_line_and_unexpected_errors_keep_their_traceback(
    tmp_path, capsys, monkeypatch
):
    (tmp_path / "spec.toml").write_text(TINY_DATA + "[model]\nhorizon = 4\nhidden_size = -1\n")
    err = _fails(capsys, "backtest", str(tmp_path / "spec.toml"), "--quiet")
    assert err.startswith("forecaster backtest: error: ") and "`hidden_size`" in err

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(studies, "run_study", broken)
    with pytest.raises(RuntimeError, match="a bug"):
        main(["backtest", str(tmp_path / "spec.toml")])


def test_a_missing_csv_names_the_path_it_was_resolved_to(tmp_path, capsys):
    (tmp_path / "specs").mkdir()
    (tmp_path / "specs" / "spec.toml").write_text('[data]\npath = "sales.csv"\nhorizon = 4\n')
    err = _fails(capsys, "backtest", str(tmp_path / "specs" / "spec.toml"))
    resolved = (tmp_path / "specs" / "sales.csv").resolve()
    assert f"`path` 'sales.csv' is resolved relative to the spec's folder: {resolved} does not exist" in err


def test_a_loader_takes_the_roles_that_data_declares(tmp_path):
    data = {"loader": "synthetic", "args": {"n_series": 2, "length": 30}, "future_covariates": [], "horizon": 3}
    _, defaults = studies.load_study_data(data, tmp_path)
    assert defaults["future_covariates"] == [] and defaults["horizon"] == 3 and defaults["freq"] == "MS"


def test_the_csv_example_runs_end_to_end_with_its_covariates(tmp_path, capsys):
    spec = REPO / "backtests" / "csv_example.toml"
    settings = tomllib.loads(spec.read_text())
    assert settings["model"]["max_steps"] == 20 and settings["model"]["hidden_size"] == 8
    assert settings["backtest"]["n_windows"] == 1
    assert main(["backtest", str(spec), "--out", str(tmp_path / "report"), "--quiet"]) == 0
    text = (tmp_path / "report" / "report.md").read_text()
    assert "| `future_covariates` | `promo` |" in text and "| `past_covariates` | `traffic` |" in text
    assert set(pd.read_csv(tmp_path / "report" / "forecasts.csv")["unique_id"]) == {f"S00{k}" for k in range(5)}
    assert "seq2seq" in capsys.readouterr().out


def test_version(capsys):
    with pytest.raises(SystemExit) as raised:
        main(["--version"])
    assert raised.value.code == 0 and capsys.readouterr().out.strip() == f"forecaster {forecaster.__version__}"


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory, panel):
    df, _ = panel
    folder = tmp_path_factory.mktemp("explain") / "model"
    fast_model().fit(df).save(folder)
    return folder


def test_explain_reads_a_csv_with_its_own_column_names(tmp_path, panel, saved_model, capsys):
    df, _ = panel
    renamed = df.rename(columns={"unique_id": "store", "ds": "month", "y": "sales"})
    renamed.to_csv(tmp_path / "sales.csv", index=False)
    argv = ["explain", str(saved_model), "--data", str(tmp_path / "sales.csv"), "--out", str(tmp_path / "plots")]
    err = _fails(capsys, *argv)
    assert "no column 'unique_id'" in err and "--id-col" in err and "'store'" in err
    assert main([*argv, "--id-col", "store", "--time-col", "month", "--target-col", "sales"]) == 0
    assert (tmp_path / "plots" / "forecasts.png").stat().st_size > 0
    assert set(pd.read_csv(tmp_path / "plots" / "attention.csv")["unique_id"]) == set(df["unique_id"])


def test_explain_refuses_integer_years_instead_of_reading_nanoseconds(tmp_path, panel, saved_model, capsys):
    df, _ = panel
    years = df.assign(ds=df.groupby("unique_id").cumcount() + 1990).rename(columns={"ds": "year"})
    years.to_csv(tmp_path / "years.csv", index=False)
    argv = ["explain", str(saved_model), "--data", str(tmp_path / "years.csv"), "--time-col", "year"]
    err = _fails(capsys, *argv, "--out", str(tmp_path / "p"))
    assert "column 'year' holds numbers" in err  # the file's own column, not the model's `ds`
    assert err.startswith("forecaster explain: error: ") and "holds numbers" in err and '--date-format "%Y"' in err
    assert "pd.to_datetime" not in err


def test_explain_reads_dates_one_way_only_as_a_spec_does(tmp_path, panel, saved_model, capsys):
    """Day-first dates were read month-first without a word (01/02/2000 as 2 January), moving every series' times."""
    df, _ = panel
    df.assign(ds=df["ds"].dt.strftime("%d/%m/%Y")).to_csv(tmp_path / "dayfirst.csv", index=False)
    argv = ["explain", str(saved_model), "--data", str(tmp_path / "dayfirst.csv"), "--out", str(tmp_path / "plots")]
    err = _fails(capsys, *argv)
    assert "read differently day-first and month-first" in err and "'ds'" in err and '--date-format "%d/%m/%Y"' in err
    assert main([*argv, "--date-format", "%d/%m/%Y"]) == 0
    written = pd.read_csv(tmp_path / "plots" / "attention.csv", parse_dates=["ds_history"])
    assert written["ds_history"].max() == df["ds"].max()  # the last month, read day first
    err = _fails(capsys, *argv, "--date-format", "%Y-%m")
    assert "does not match --date-format '%Y-%m'" in err


def test_explain_refuses_an_out_file_before_any_work(tmp_path, saved_model, capsys, monkeypatch):
    """`explain --out <file>` did all the work, then died with a traceback."""
    (tmp_path / "taken").write_text("keep me")
    loads = []
    monkeypatch.setattr(forecaster.Seq2SeqForecaster, "load", classmethod(lambda cls, path: loads.append(path)))
    err = _fails(capsys, "explain", str(saved_model), "--out", str(tmp_path / "taken" / "plots"))
    assert "is a file, not a folder" in err and not loads
    assert (tmp_path / "taken").read_text() == "keep me"


@pytest.mark.parametrize("command", ["backtest", "explain"])
def test_an_out_folder_that_cannot_be_written_is_refused_before_any_work(tmp_path, saved_model, capsys, monkeypatch, command):
    """A read-only --out (or parent) ran the whole backtest, then died with a PermissionError traceback."""
    import tempfile

    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    work = []
    monkeypatch.setattr(tempfile, "mkdtemp", refused)
    monkeypatch.setattr(studies, "run_study", lambda *a, **k: work.append(a))
    monkeypatch.setattr(forecaster.Seq2SeqForecaster, "load", classmethod(lambda cls, path: work.append(path)))
    first = str(tmp_path / "study.toml") if command == "backtest" else str(saved_model)
    err = _fails(capsys, command, first, "--out", str(tmp_path / "ro" / "report"))
    assert f"cannot write in {str(tmp_path)!r} (Permission denied)" in err and not work


@pytest.mark.parametrize(("data", "message"), [(".", "is a folder"), ("/dev/zero", "is not a regular file")])
def test_explain_says_what_a_data_path_is_instead_of_no_such_file(tmp_path, saved_model, capsys, data, message):
    err = _fails(capsys, "explain", str(saved_model), "--data", data, "--out", str(tmp_path / "p"))
    assert f"--data {data!r} {message}" in err


def test_the_printed_summary_fits_100_columns():
    import pandas as pd

    from forecaster.cli import summary_lines

    columns = ["mean_mase", "median_mase", "mean_smape", "n_scored", "n_zero_scale", "win_rate", "rel_mase_vs_seasonal_naive"]
    columns += ["rel_mase_vs_auto_ets", "coverage", "fit_seconds", "predict_seconds"]
    summary = pd.DataFrame([[1.23456] * len(columns)] * 3, columns=columns, index=["seq2seq", "seasonal_naive", "auto_ets"])
    summary.loc["seq2seq", "fit_seconds"] = 1234.5
    text = summary_lines(summary)
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "vs AutoETS" in text and "1.235" in text and "seq2seq" in text


def test_backtest_refuses_an_output_path_through_a_file_before_running(tmp_path, capsys):
    blocker = tmp_path / "afile"
    blocker.write_text("not a folder")
    for out in (blocker, blocker / "sub"):
        with pytest.raises(SystemExit) as stop:
            main(["backtest", "backtests/csv_example.toml", "--out", str(out), "--quiet"])
        assert stop.value.code == 2
        assert "is a file, not a folder" in capsys.readouterr().err


def test_explain_reads_text_ids_that_look_like_numbers_as_text(tmp_path, capsys):
    from forecaster.datasets import make_panel

    df, _ = make_panel(n_series=3, length=30, seed=2, short_share=0.0, missing_share=0.0, static=False)
    df = df.assign(unique_id=df["unique_id"].str.replace("S", "0"))[["unique_id", "ds", "y"]]
    fast_model().fit(df).save(tmp_path / "model")
    df.to_csv(tmp_path / "history.csv", index=False)
    code = main(
        [
            "explain",
            str(tmp_path / "model"),
            "--data",
            str(tmp_path / "history.csv"),
            "--out",
            str(tmp_path / "o"),
            "--ids",
            "0001",
        ]
    )
    assert code == 0
    attention = pd.read_csv(tmp_path / "o" / "attention.csv", dtype={"unique_id": str})
    assert set(attention["unique_id"]) == {"0000", "0001", "0002"}
    with pytest.raises(SystemExit) as stop:
        main(["explain", str(tmp_path / "model"), "--out", str(tmp_path / "o2"), "--max-series", "0"])
    assert stop.value.code == 2 and not (tmp_path / "o2").exists()


def test_a_negative_season_in_a_spec_is_refused_by_name(tmp_path, capsys):
    text = Path("backtests/csv_example.toml").read_text().replace("[backtest]\n", "[backtest]\nseason_length = -5\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "example.csv").write_text(Path("backtests/data/example.csv").read_text())
    (tmp_path / "spec.toml").write_text(text)
    with pytest.raises(SystemExit) as stop:
        main(["backtest", str(tmp_path / "spec.toml"), "--out", str(tmp_path / "out"), "--quiet"])
    assert stop.value.code == 2
    assert "[backtest]: `season_length` must be a positive integer up to 100,000 or None; got -5" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("table", "line", "expected"),
    [
        ("model", 'hidden_size = "8"', r"\[model\]: `hidden_size` must be a positive integer"),
        ("backtest", 'n_windows = "1"', r"\[backtest\]: `n_windows` must be a positive integer"),
        ("backtest", 'baselines = ["seasonal_naiv"]', r"\[backtest\]: Unknown baseline"),
    ],
)
def test_a_bad_value_in_a_spec_names_its_table(tmp_path, capsys, table, line, expected):
    import re

    text = Path("backtests/csv_example.toml").read_text()
    key = line.split(" = ")[0]
    text = re.sub(rf"(?m)^{key} = .*$", line, text)  # the example sets each of these keys once
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "example.csv").write_text(Path("backtests/data/example.csv").read_text())
    (tmp_path / "spec.toml").write_text(text)
    with pytest.raises(SystemExit) as stop:
        main(["backtest", str(tmp_path / "spec.toml"), "--out", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and re.search(expected, err) and len(err.strip().splitlines()) == 1


def test_explain_of_a_model_with_future_covariates_asks_for_the_future_flag(tmp_path, panel, capsys):
    """Without ``--future`` the error named the Python argument (``future_df``), which a command-line user never sees."""
    df, _ = panel
    model = fast_model(future_covariates=["promo"], max_steps=3).fit(df)
    model.save(tmp_path / "model")
    err = _fails(capsys, "explain", str(tmp_path / "model"), "--out", str(tmp_path / "plots"))
    assert "--future is required" in err and "['promo']" in err and "future_df" not in err


@pytest.mark.parametrize("date_format", [None, "%Y-%m-%d %H:%M:%S%z"])
def test_a_spec_reads_local_hours_written_across_a_daylight_saving_change(date_format):
    """A CSV of Berlin hours holds +01:00 and +02:00: refused as 'Tz-aware datetime.datetime cannot be converted',
    with a pd.to_datetime fix a spec cannot apply, whichever date_format was set."""
    from forecaster.evaluation.studies import parse_dates

    hours = pd.date_range("2024-03-30", periods=48, freq="h", tz="Europe/Berlin")
    with pytest.warns(UserWarning, match="2 UTC offsets"):
        read = parse_dates(pd.Series(hours.astype(str)), date_format, "[data] `hour`")
    pd.testing.assert_series_equal(read, pd.Series(hours.tz_convert("UTC")), check_names=False)


def test_explain_says_which_history_its_figures_were_measured_on(tmp_path, panel, saved_model, capsys):
    # The occlusion check reads the history the forecasts come from: without --data the model's stored tail, whose
    # figures differ from the full history's. The summary line says which one it measured on.
    df, _ = panel
    assert main(["explain", str(saved_model), "--out", str(tmp_path / "tail")]) == 0
    kept = forecaster.Seq2SeqForecaster.load(saved_model).history_.groupby("unique_id").size()
    tail_line = capsys.readouterr().out
    assert f"measured on the model's stored history ({kept.min()}" in tail_line and "--data for the full one" in tail_line
    df.to_csv(tmp_path / "history.csv", index=False)
    assert main(["explain", str(saved_model), "--data", str(tmp_path / "history.csv"), "--out", str(tmp_path / "full")]) == 0
    assert f"measured on the history in {tmp_path / 'history.csv'}" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("setup", "path", "message"),
    [
        (lambda d: None, ".", "is a folder, not a file"),
        (lambda d: (d / "empty.csv").write_text(""), "empty.csv", "'empty.csv': " + "'{}' is empty"),
        (lambda d: (d / "panel.csv").write_bytes(b"\xe0\xff\x00\x01" * 64), "panel.csv", "cannot be read as CSV"),
    ],
)
def test_a_spec_names_the_file_it_cannot_read_and_why(tmp_path, capsys, setup, path, message):
    """A folder was said not to exist; an empty CSV gave pandas' "No columns to parse from file", naming no file."""
    setup(tmp_path)
    (tmp_path / "study.toml").write_text(f'[data]\npath = "{path}"\n[model]\nhorizon = 3\n')
    err = _fails(capsys, "backtest", str(tmp_path / "study.toml"), "--out", str(tmp_path / "r"))
    assert message.format(tmp_path / path) in err


def test_a_parquet_file_is_read_whatever_the_case_of_its_suffix(tmp_path):
    from forecaster.data.tables import read_table

    df = pd.DataFrame({"unique_id": ["a", "a"], "ds": ["2020-01-01", "2020-02-01"], "y": [1.0, 2.0]})
    for name in ("upper.PARQUET", "short.pq"):
        df.to_parquet(tmp_path / name)
        pd.testing.assert_frame_equal(read_table(tmp_path / name), df)


def test_a_spec_that_names_columns_in_model_is_told_to_name_them_in_data(tmp_path, capsys):
    """[model] id_col was accepted and could never work: [data] renames the file's columns before the model sees them."""
    (tmp_path / "study.toml").write_text(TINY_DATA + '[model]\nid_col = "store"\n')
    err = _fails(capsys, "backtest", str(tmp_path / "study.toml"), "--out", str(tmp_path / "r"))
    assert "[model] `id_col`: a file's column names are set in [data]" in err
    (tmp_path / "same.toml").write_text(TINY_DATA + '[model]\nid_col = "unique_id"\nhorizon = 3\n')  # as [data] names it
    assert studies.load_spec(tmp_path / "same.toml")["model"]["id_col"] == "unique_id"


def test_ctrl_c_ends_a_command_with_one_line_and_status_130(tmp_path, capsys, monkeypatch):
    """An interrupt printed a full KeyboardInterrupt traceback."""

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(studies, "run_study", interrupted)
    with pytest.raises(SystemExit) as raised:
        main(["backtest", str(tmp_path / "study.toml"), "--out", str(tmp_path / "r")])
    assert raised.value.code == 130
    err = capsys.readouterr().err
    assert err.strip() == "forecaster backtest: interrupted." and not (tmp_path / "r").exists()


def test_a_spec_whose_covariate_is_its_target_says_so(tmp_path, capsys):
    """`future_covariates = ["sales"]` with `target_col = "sales"` ended in "`df` is missing column(s) `sales`"."""
    pd.DataFrame({"store": ["a"] * 30, "month": pd.date_range("2020-01-01", periods=30, freq="MS"), "sales": 1.0}).to_csv(
        tmp_path / "sales.csv", index=False
    )
    (tmp_path / "study.toml").write_text(
        '[data]\npath = "sales.csv"\nid_col = "store"\ntime_col = "month"\ntarget_col = "sales"\n'
        'future_covariates = ["sales"]\n[model]\nhorizon = 3\n'
    )
    err = _fails(capsys, "backtest", str(tmp_path / "study.toml"), "--out", str(tmp_path / "r"))
    assert "[data] `future_covariates` names 'sales', the file's target_col column" in err


def test_explain_says_each_warning_once(tmp_path, panel, saved_model):
    """Every plot and check forecast the history again, and `explain --data` printed one warning 8 times."""
    import warnings

    df, _ = panel
    ended = df.assign(y=df["y"].where(~((df["unique_id"] == df["unique_id"].iloc[0]) & (df["ds"] == df["ds"].max()))))
    ended.to_csv(tmp_path / "history.csv", index=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        main(["explain", str(saved_model), "--data", str(tmp_path / "history.csv"), "--out", str(tmp_path / "p")])
    messages = [str(w.message) for w in caught if "rows after the last observed" in str(w.message)]
    assert len(messages) == 1


TERMINATED_WHILE_WRITING = """
import os, signal, sys, time
from pathlib import Path
from forecaster import cli
from forecaster.evaluation import report, studies

def write_then_killed(result, staging, title):
    (staging / "report.md").write_text("half")
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(30)
    return ["report.md"]

class Result:
    def to_report(self, out, title=None):
        return report.write_report(self, out, title)

report._write_files = write_then_killed
studies.run_study = lambda spec, progress: (Result(), {})
sys.exit(cli.main(["backtest", "study.toml", "--out", str(Path(sys.argv[1]) / "r"), "--quiet"]))
"""


def test_sigterm_while_a_report_is_written_leaves_nothing_behind(tmp_path):
    """`kill` (or a scheduler's time limit) during the report left a `.r.partial-*` folder and no message."""
    script = tmp_path / "run.py"
    script.write_text(TERMINATED_WHILE_WRITING)
    out = tmp_path / "out"
    out.mkdir()
    done = subprocess.run([sys.executable, str(script), str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 143, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "forecaster backtest: terminated."
    assert list(out.iterdir()) == []


def test_a_sigterm_the_launcher_ignores_stays_ignored(monkeypatch, tmp_path):
    """The handler replaced an inherited SIG_IGN (`trap '' TERM`): a command that ignored SIGTERM then exited 143."""
    import signal

    seen = []
    monkeypatch.setattr(studies, "run_study", lambda *a, **k: seen.append(signal.getsignal(signal.SIGTERM)) or 1 / 0)
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        with pytest.raises(ZeroDivisionError):
            main(["backtest", str(tmp_path / "study.toml"), "--out", str(tmp_path / "r")])
        assert seen == [signal.SIG_IGN] and signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_warning_reads_as_a_line_of_the_command_not_as_python_source(tmp_path, panel, saved_model):
    """Warnings printed as '.../bin/forecaster:4: UserWarning: ... sys.exit(main())'."""
    df, _ = panel
    ended = df.assign(y=df["y"].where(~((df["unique_id"] == df["unique_id"].iloc[0]) & (df["ds"] == df["ds"].max()))))
    ended.to_csv(tmp_path / "history.csv", index=False)
    call = [str(saved_model), "--data", str(tmp_path / "history.csv"), "--out", str(tmp_path / "p")]
    script = f"import sys; from forecaster.cli import main; sys.exit(main(['explain', *{call!r}]))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "rows after the last observed" in line]
    assert lines and all(line.startswith("forecaster explain: warning: ") for line in lines)
    assert "UserWarning" not in done.stderr and "sys.exit" not in done.stderr


def test_the_warnings_hook_is_restored_and_left_alone_off_the_main_thread(tmp_path, monkeypatch):
    import threading
    import warnings

    from forecaster import cli

    original = warnings.formatwarning
    seen = []
    monkeypatch.setattr(cli, "_explain_once", lambda args: seen.append(warnings.formatwarning) or 0)
    assert main(["explain", str(tmp_path), "--out", str(tmp_path / "o")]) == 0
    assert warnings.formatwarning is original and seen[-1] is not original  # hooked while it ran, restored after
    line = seen[-1](FutureWarning("soon"), FutureWarning, "f.py", 1)
    assert line == "forecaster explain: FutureWarning: soon\n"  # another library's warning keeps its kind
    thread = threading.Thread(target=main, args=(["explain", str(tmp_path), "--out", str(tmp_path / "o")],))
    thread.start()
    thread.join()
    assert seen[-1] is original and warnings.formatwarning is original  # off the main thread: not touched
