"""The Markdown of the report's tables: the summary, per fold, against a baseline, per horizon step, and the forecast
distribution with its calibration by fold."""

from __future__ import annotations

import pandas as pd

from .analysis import better_and_worse, calibration_by_fold, leaderboard, mase_by_step, paired, per_fold
from .by_covariate import covariate_breakdown
from .report_tables import COVERAGE_TOLERANCE, label, markdown_table, readable_summary
from .report_text import by_step_table


def tables(result, summary, reference) -> list[str]:
    """The Tables section: the summary, per fold, against the reference, per horizon step, the forecast distribution."""
    by_step = mase_by_step(result.forecasts, result.metrics, result.models)
    n_windows, cutoffs = result.settings["n_windows"], result.settings.get("cutoffs")
    return [
        "## Tables",
        "",
        "### Summary",
        "",
        markdown_table(readable_summary(summary)),
        "",
        "summary.csv keeps the column names (`mean_mase`, `rel_mase_vs_auto_ets`, `win_rate`, ...); the glossary "
        "at the end says what each column is.",
        "",
        "### Per fold",
        "",
        "Each model's mean MASE and interval coverage in each fold (fold 1 has the earliest origin).",
        "",
        markdown_table(per_fold(result.metrics, result.models, n_windows, cutoffs)),
        "",
        *against(result, reference),
        *by_step_table(by_step),
        *distribution(result, summary, result.calibration()),
    ]


def against(result, reference: str | None) -> list[str]:
    """The leaderboard section: where seq2seq beats the reference most, and where it loses most."""
    if reference is None:
        return ["## Against a baseline", "", "No baseline ran, so there is nothing to compare seq2seq with per series.", ""]
    ref = label(reference)
    table = paired(result.metrics, reference)
    better, worse = better_and_worse(table)
    gains, losses = leaderboard(result.metrics, reference)
    intro = ""
    if reference != "auto_ets":
        intro = f"AutoETS is not among the baselines: against {ref} (`{reference}`), the first baseline. "
    parts = [
        f"### Against {ref}",
        "",
        f"{intro}Per series, the mean MASE over the folds where both seq2seq and {ref} are scored; `difference` is "
        f"seq2seq minus {ref} (negative: seq2seq is better) and `ratio` seq2seq over {ref}. seq2seq is better on "
        f"{better} of {len(table)} series, worse on {worse}.",
        "",
    ]
    for heading, rows, none in (
        (f"Where seq2seq beats {ref} most", gains, "on no series"),
        (f"Where seq2seq loses most to {ref}", losses, "on no series"),
    ):
        shown = f" (the {len(rows)} largest differences)" if len(rows) >= 10 else ""
        parts += [f"#### {heading}{shown}", ""]
        parts += [markdown_table(rows, code=("unique_id",)) if len(rows) else f"None: seq2seq does so {none}.", ""]
    return parts


def distribution(result, summary: pd.DataFrame, rates: pd.DataFrame) -> list[str]:
    """The forecast distribution: WQL and each level's hit rate per model (the baselines at the model's levels)."""
    if not len(rates) or "wql" not in summary:
        return []
    wql = summary["wql"].dropna().rename("WQL").to_frame()
    shown = rates.rename(columns=lambda level: f"q{level * 100:g}")
    by_fold = calibration_by_fold_lines(result)
    return [
        "### Forecast distribution",
        "",
        "WQL, the weighted quantile loss of the probabilistic benchmarks (Chronos, fev, GIFT-Eval): the mean over "
        "the levels of 2 x the pinball loss summed over every scored period, over the sum of |y| (lower is better). "
        "The statsforecast baselines are scored at the model's levels, from their central prediction intervals. "
        "Below, each level's hit rate: the share of actuals at or below that quantile, which a calibrated forecast "
        f"matches to its level (flagged beyond {COVERAGE_TOLERANCE * 100:g} points; see the calibration plot). An "
        "actual equal to quantiles (a count at zero, a closed period) counts at those levels by where it lies among "
        "them, as a randomized PIT would on average, not as a hit at each.",
        "",
        markdown_table(wql),
        "",
        markdown_table(shown),
        "",
        *by_fold,
        *covariate_lines(result),
    ]


def calibration_by_fold_lines(result) -> list[str]:
    """Each fold's coverage and worst level per model: how far one origin's hit rates stray on their own."""
    if result.settings.get("n_windows", 1) < 2 or "cutoff" not in result.quantile_metrics:
        return []
    n_windows = result.settings.get("n_windows", 1)
    table = calibration_by_fold(result.calibration(by="fold"), per_fold(result.metrics, result.models, n_windows))
    return [
        "#### Calibration by fold",
        "",
        "Each fold on its own: the outermost interval's coverage and the level whose hit rate lies furthest from "
        "it (`off_points`). Every series shares a fold's periods, so a shock common to them (demand falling "
        "everywhere after the origin) moves all of that fold's hit rates together, and data up to the origin "
        "does not show it. The spread between folds shows how far one origin's hit rates can stray.",
        "",
        markdown_table(table),
        "",
    ]


def covariate_lines(result) -> list[str]:
    """Errors and coverage by each value of each future-known flag or code (``by_covariate``); none without one."""
    table = covariate_breakdown(result)
    if not len(table):
        return []
    return [
        "#### By future-known covariate value",
        "",
        "The scored points split by each value of each future-known flag or code: how many, each model's mean absolute "
        "error, and the share of actuals inside its outermost interval, pooled over the points (an overall coverage "
        "of 80% can hold an interval too narrow on promotion days or holidays). by_covariate.csv holds the same table.",
        "",
        markdown_table(table),
        "",
    ]
