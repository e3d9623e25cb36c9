import pandas as pd
from conftest import fast_model

from forecaster.cli import main


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
    assert "the network alone (no statistical blend)" in text  # the synthetic loader declares a future covariate
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
