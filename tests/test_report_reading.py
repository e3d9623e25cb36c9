"""A report a planner reads top-down: the verdict in words, numbers a person reads, the user's column names, every
promised figure drawn, and a glossary naming every column."""

from __future__ import annotations

import re

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from conftest import fast_model

import forecaster
from forecaster.datasets import make_panel
from forecaster.plots import plot_attention


def backtest(df, **model):
    return forecaster.backtest(fast_model(**model), df, n_windows=2, baselines=("seasonal_naive", "auto_ets"), progress=False)


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    df, _ = make_panel(n_series=6, length=48, seed=5, short_share=0.0, missing_share=0.0)
    folder = tmp_path_factory.mktemp("plain") / "r"
    backtest(df).to_report(folder)
    plt.close("all")
    return folder


def test_numbers_read_as_four_significant_digits_never_in_scientific_notation():
    from forecaster.plots import readable

    assert [readable(v) for v in (0.090312, 0.093, 132_100.4, 1.5e-7, 0.0, 6.5)] == [
        "0.09031",
        "0.09300",
        "132100",
        "0.0000001500",
        "0",
        "6.500",
    ]


def test_the_report_has_no_scientific_notation_four_digit_wql_and_one_duration_format(plain):
    """WQL was printed to three decimals (0.090 beside 0.093), seconds as 72.680 and 91.8 s, padding as 0.00e+00."""
    text = (plain / "report.md").read_text()
    assert not re.search(r"\d[eE][+-]\d", text)
    wql = re.search(r"\| seq2seq \| (\S+) \|", text[text.index("| model | WQL |") :]).group(1)
    assert len(wql.replace("0.", "", 1).lstrip("0")) == 4, wql
    summary = text[text.index("### Summary") :].split("\n\n")[1].splitlines()
    header = [c.strip() for c in summary[0].strip("|").split("|")]
    for row in summary[2:]:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert all(re.fullmatch(r"[\d,]+\.\d s", cells[header.index(h)]) for h in ("fit time", "predict time")), row
    assert re.search(r"run time: [\d,]+\.\d s", text)


def test_the_first_lines_say_better_or_worse_than_both_baselines_by_how_much_and_on_what(plain):
    first = (plain / "report.md").read_text().split("\n\n")[1]
    assert re.match(r"\*\*In short:\*\* seq2seq forecast (better|worse) than ", first)
    assert "AutoETS" in first and "seasonal naive" in first and "% lower" in first or "% higher" in first
    # what the means are over, in words that cannot be read as "better on 6 of 6 series"
    assert re.search(r"averaged over all 6 series and [\d,]+ forecast points\.$", first)
    # said once: the verdict's line below does not repeat the series and points
    assert (plain / "report.md").read_text().split("## ")[0].count("6 series") == 1
    assert (plain / "report.md").read_text().split("\n\n")[3] == "## Forecasts against actuals"


def test_the_glossary_names_every_column_of_every_table(plain):
    from forecaster.evaluation.report_text import GLOSSARY

    text = (plain / "report.md").read_text()
    named = {part.strip() for shown, csv, _ in GLOSSARY for part in re.split(r", | \(|\)", shown) if part.strip()}
    named |= {part.strip() for _, csv, _ in GLOSSARY if csv for part in csv.split(",")}
    headers: set[str] = set()
    for block in text.split("\n\n"):
        lines = block.strip().splitlines()
        if lines and lines[0].startswith("| ") and len(lines) > 1 and set(lines[1]) <= set("|-: "):
            headers |= {c.strip() for c in lines[0].strip("|").split("|")}
    levels = {h for h in headers if re.fullmatch(r"q\d+", h)}
    missing = headers - named - levels - {"seq2seq", "auto_ets", "seasonal_naive"}
    assert not missing, missing
    assert "## Glossary" in text and text.index("## Glossary") > text.index("## Tables")


def test_a_report_of_a_backtest_with_its_own_column_names_is_written_and_names_them(tmp_path):
    """id_col="Series_ID": the backtest ran, then to_report raised KeyError: 'unique_id' and wrote nothing."""
    df, _ = make_panel(n_series=4, length=44, seed=6, short_share=0.0, missing_share=0.0)
    df = df.rename(columns={"unique_id": "Series_ID", "ds": "Month", "y": "Sales"})
    backtest(df, id_col="Series_ID", time_col="Month", target_col="Sales").to_report(tmp_path / "r")
    plt.close("all")
    text = (tmp_path / "r" / "report.md").read_text()
    assert "- columns: series id `Series_ID`, time `Month`, target `Sales`" in text
    assert (tmp_path / "r" / "forecast_overview.png").exists() and (tmp_path / "r" / "attention_worst.png").exists()


def test_every_pick_gets_its_attention_map_when_series_end_on_different_dates(tmp_path):
    """Only series forecast at the panel's latest cutoff got maps: the others' were dropped without a word."""
    df, _ = make_panel(n_series=6, length=48, seed=7, short_share=0.0, missing_share=0.0)
    ids = sorted(df["unique_id"].unique())
    ends = df.groupby("unique_id")["ds"].transform("max")
    early = df["unique_id"].isin(ids[::2]) & (df["ds"] > ends - pd.DateOffset(months=2))  # every other series 2 months short
    result = backtest(df[~early])
    result.to_report(tmp_path / "r")
    plt.close("all")
    text = (tmp_path / "r" / "report.md").read_text()
    picks = re.findall(r"### Forecast: (\w+) series", text)
    for name in picks:
        assert (tmp_path / "r" / f"attention_{name}.png").exists() or f"No attention map for the {name} series" in text
    assert sum((tmp_path / "r" / f"attention_{name}.png").exists() for name in picks) == len(picks)


def test_the_attention_plots_top_panel_is_scaled_to_the_window_it_shows(panel):
    """The y-axis spanned the whole history, so the window the attention covers was flattened into a line."""
    df, _ = panel
    fitted = fast_model().fit(df)
    uid = df["unique_id"].iloc[0]
    series = df[df["unique_id"] == uid].copy()
    series.loc[series.index[:5], "y"] = 1e6  # a spike long before the window
    explanation = fitted.explain(df=df, include_padding=True)
    fig = plot_attention(explanation, df=series, unique_id=uid, forecasts=fitted.predict(df))
    shown = explanation[explanation["unique_id"] == uid]
    window = series[series["ds"] >= shown["ds_history"].min()]["y"]
    top = fig.axes[0].get_ylim()[1]
    plt.close(fig)
    assert np.isfinite(window.max()) and top < 10 * max(abs(window.max()), 1.0) < 1e6


def test_the_first_sentence_names_every_baseline_asked_for_mstl_too():
    """MSTL asked for, and better than the model: the first sentence compared with AutoETS and seasonal naive only,
    and said "better"."""
    import pandas as pd

    from forecaster.evaluation.report_text import verdict_sentence

    summary = pd.DataFrame(
        {
            "mean_mase": [0.7743],
            "rel_mase_vs_auto_ets": [0.997],
            "rel_mase_vs_seasonal_naive": [0.80],
            "rel_mase_vs_mstl": [1.026],
        },
        index=["seq2seq"],
    )
    first = verdict_sentence(summary, None, {"n_series": 6})
    assert "better than AutoETS and seasonal naive but worse than MSTL" in first
    assert "0.3% lower than AutoETS's, 20.0% lower than seasonal naive's and 2.6% higher than MSTL's" in first


def test_the_first_sentence_says_autoets_had_no_season_where_it_could_fit_none():
    """Weekly data (season 52): statsforecast's ETS fits no season over 24, yet the verdict read "better than AutoETS"
    as if against a seasonal model; only a note further down said otherwise."""
    import pandas as pd

    from forecaster.evaluation.report_text import verdict_sentence

    ratios = {"mean_mase": [0.8], "rel_mase_vs_auto_ets": [0.51], "rel_mase_vs_seasonal_naive": [0.9]}
    summary = pd.DataFrame(ratios, index=["seq2seq"])
    weekly = verdict_sentence(summary, None, {"n_series": 6, "season_length": 52})
    assert "better than seasonless AutoETS and seasonal naive" in weekly and "49.0% lower than seasonless AutoETS's" in weekly
    monthly = verdict_sentence(summary, None, {"n_series": 6, "season_length": 12})
    assert "better than AutoETS and seasonal naive" in monthly and "seasonless" not in monthly
