"""The words of a backtest report: its verdict, notes, captions, attention facts and glossary (report.md, top-down).

A planner reads the first screen: one sentence saying whether seq2seq beat AutoETS and seasonal naive, by how much
and on how much of the data, and a figure of forecasts against actuals. Then the figures a planner looks at, then
the tables, and at the end the settings, the method and a glossary naming every column in words. The HTML page
folds the analyst's detail (leaderboards, per-step and per-fold tables, attention, model settings) into sections
that open on a click (:data:`FOLDED`); report.md holds all of it in the same order.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..plots import readable
from .analysis import MODEL, reference_model, series_mase, wql_ratio
from .baselines import baseline_notes, ets_fits_no_season
from .report_settings import closure_note
from .report_tables import label, markdown_table, nominal_words, occlusion_warning

# Headings whose sections report.html shows folded (a click opens them); report.md shows them as they are.
FOLDED = (
    "Against ",
    "MASE by horizon step, per step",
    "Relative MASE, the distribution",
    "Forecast distribution",
    "Attention",
    "Model settings",
    "Settings and method",
    "Glossary",
)

# The notes above the report's figures: why each shows what it shows.
OVERVIEW_NOTE = (
    "The best, median and worst series by seq2seq's own mean MASE over its folds: the best drawn on its best fold, "
    "the worst on its worst, the median on its last. Dashed: what happened; blue: the forecast and its interval."
)
STEP_NOTE = (
    "Left: each model's mean scaled error at each step ahead. Right: each quantile level's share of actuals at or "
    "below the forecast, which for a calibrated forecast lies on the diagonal."
)
PER_SERIES_NOTE = (
    "One panel per baseline: a point per series, its mean MASE under the baseline (across) and seq2seq (up) over the "
    "folds both scored; below the dashed line, seq2seq did better. Axes end at the 98th percentile: series beyond sit "
    "on the edge as triangles, counted in the title."
)
RELATIVE_NOTE = (
    "Per series and fold, each model's MASE over AutoETS's on a log2 scale (left of 0: better than AutoETS); ratios "
    "beyond 4x either way are counted in the end bins, and the title says how many."
)

# Every column a report's tables or CSVs show, in words: (as shown, as in the CSVs or None, what it is).
GLOSSARY = (
    ("model", None, "seq2seq (this package's forecaster) or a statsforecast baseline: AutoETS, seasonal naive, MSTL"),
    (
        "mean MASE",
        "mean_mase",
        "mean absolute scaled error: the mean absolute error over the horizon divided by the "
        "mean absolute seasonal difference of the fold's training data, averaged over series and folds (lower is better; "
        "1 is as good as a seasonal naive forecast in the training data)",
    ),
    (
        "MASE / AutoETS, MASE / seasonal naive, MASE / MSTL",
        "rel_mase_vs_auto_ets, rel_mase_vs_seasonal_naive, rel_mase_vs_mstl",
        "the model's mean "
        "MASE over the baseline's, on the series and folds both scored (below 1: the model's errors are smaller)",
    ),
    ("median MASE", "median_mase", "the median over series and folds of the MASE"),
    ("wins", "win_rate", "the share of series-folds where the model has the lowest MASE of all models (a tie shares the win)"),
    (
        "WQL",
        "wql",
        "weighted quantile loss: the mean over the quantile levels of 2 x the pinball loss summed over every "
        "scored period, over the sum of |actual| (lower is better)",
    ),
    (
        "coverage",
        "coverage",
        "the share of actuals inside the outermost interval (10-90%, nominal 80%, by default; an actual equal to "
        "quantiles counts a share, as in the hit rates), averaged over the series-folds as MASE is (the hit rates "
        "pool every actual, so their spread can differ slightly)",
    ),
    ("sMAPE %", "mean_smape", "the symmetric mean absolute percentage error, 0 to 200"),
    ("series-folds, n_scored", "n_scored", "how many series-fold windows were scored"),
    ("zero-scale", "n_zero_scale", "series-folds left out of MASE because their seasonal differences are all zero"),
    (
        "fit time, predict time",
        "fit_seconds, predict_seconds",
        "seconds spent fitting and forecasting, summed over folds (for the baselines, fit includes their forecast)",
    ),
    ("covariate, value, points", None, "a future-known covariate, one of its values, and the scored forecast points on it"),
    (
        "mae_seq2seq, mae_auto_ets, mae_seasonal_naive, mae_mstl",
        None,
        "that model's mean absolute error over those points, in the data's units",
    ),
    (
        "coverage_seq2seq, coverage_auto_ets, coverage_seasonal_naive, coverage_mstl",
        None,
        "the share of those points' actuals inside that model's outermost interval, counted as coverage counts it",
    ),
    ("fold", None, "the forecast origin's number, 1 the earliest"),
    ("cutoff", "cutoff", "the last period of training data in a fold: forecasts start the period after"),
    ("unique_id", "unique_id", "the series (in the CSVs under this name whatever the data called it)"),
    ("seq2seq_mase, auto_ets_mase, seasonal_naive_mase", None, "a series' mean MASE over the folds where both models are scored"),
    ("difference", None, "seq2seq's MASE minus the baseline's (negative: seq2seq is better)"),
    ("ratio", None, "seq2seq's MASE over the baseline's"),
    ("n_folds", None, "how many folds the comparison averages"),
    ("step", None, "the horizon step: 1 is the period after the cutoff"),
    ("seq2seq, auto_ets, seasonal_naive (per step)", None, "the mean scaled absolute error of that model at that step"),
    (
        "q10 ... q90",
        None,
        "hit rate at a quantile level: the share of actuals at or below that quantile forecast (calibrated: the level itself)",
    ),
    (
        "worst_level, off_points",
        None,
        "the quantile level whose hit rate lies furthest from its level, and how far, in percentage points",
    ),
    (
        "entropy, normalised",
        None,
        "the attention's entropy per step in nats, and over its largest possible value (1: spread evenly over the history)",
    ),
    ("last_season_share", None, "the attention weight on the last season of history before the origin"),
    ("parameter, value", None, "a setting of the seq2seq model, and the value it ran with"),
    (
        "mase, smape, abs_error, scale",
        "metrics.csv",
        "per series, fold and model: the MASE, sMAPE, mean absolute error and the seasonal scale MASE divides by",
    ),
    ("zero_scale, n_points", "metrics.csv", "whether the scale was zero (MASE undefined) and the periods scored"),
    ("reason", "skipped.csv", "why a series-fold window was left out of the verdict"),
)


def verdict_sentence(summary: pd.DataFrame, verdict: dict | None, settings: dict) -> str:
    """One sentence in plain words: better or worse than each baseline, by how much, on how many series and points."""
    if MODEL not in summary.index:
        return "**In short:** seq2seq was scored on no series."
    compared = [
        (b, float(summary.loc[MODEL, f"rel_mase_vs_{b}"]))
        for b in ("auto_ets", "seasonal_naive", "mstl")  # every baseline asked for: MSTL was left out, and with it a loss
        if f"rel_mase_vs_{b}" in summary and np.isfinite(summary.loc[MODEL, f"rel_mase_vs_{b}"])
    ]
    if verdict and _everything(verdict):  # what the means are over, not where it won ("on 4 of 4 series" read as on each)
        covered = f"averaged over all {verdict['series']:,} series and {verdict['points']:,} forecast points"
    elif verdict:
        covered = (
            f"averaged over {verdict['series']:,} of {verdict['series_total']:,} series and {verdict['points']:,} of "
            f"{verdict['points_total']:,} forecast points"
        )
    else:
        covered = f"averaged over {settings.get('n_series', '?')} series"
    mase = readable(summary.loc[MODEL, "mean_mase"])
    if not compared:
        return f"**In short:** seq2seq's mean MASE was {mase}, {covered}; no baseline ran to compare it with."
    seasonless = ets_fits_no_season(int(settings.get("season_length") or 1))  # its note says why

    def named(baseline: str) -> str:
        return "seasonless AutoETS" if baseline == "auto_ets" and seasonless else label(baseline)

    better = [named(b) for b, r in compared if r < 1]
    worse = [named(b) for b, r in compared if r >= 1]
    if better and worse:
        side = f"better than {listed(better)} but worse than {listed(worse)}"
    else:
        side = f"{'better' if better else 'worse'} than {listed(better or worse)}"
    how = listed([f"{abs(1 - r) * 100:.1f}% {'lower' if r < 1 else 'higher'} than {named(b)}'s" for b, r in compared])
    return f"**In short:** seq2seq forecast {side}: its errors (mean MASE {mase}) were {how}, {covered}."


def listed(items: list[str]) -> str:
    """``["a", "b", "c"]`` as "a, b and c"."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def second_line(summary: pd.DataFrame, result, verdict_words: str) -> str:
    """The intervals in a few words, and what the verdict leaves out."""
    parts = []
    reference = reference_model(list(summary.index))
    ratio = wql_ratio(summary, reference)
    if ratio is not None:
        parts.append(
            f"Its quantiles' WQL was {readable(summary.loc[MODEL, 'wql'])}, {abs(1 - ratio) * 100:.1f}% "
            f"{'lower' if ratio < 1 else 'higher'} than {label(reference)}'s"
        )
    if "coverage" in summary and np.isfinite(summary.loc[MODEL, "coverage"]):
        parts.append(
            f"its outermost interval held {summary.loc[MODEL, 'coverage'] * 100:.0f}% of a series' actuals on average "
            f"({nominal_words(result.settings)})"
        )
    notes = baseline_notes(result.settings.get("baselines", ()), result.settings.get("season_length", 1))
    notes += [note[0].upper() + note[1:] for note in [closure_note(result)] if note]
    return ("; ".join(parts) + ". " if parts else "") + verdict_words + "".join(f" {note}." for note in notes)


def pick_sentence(name: str, uid, fold: tuple, metrics: pd.DataFrame, reference: str | None) -> str:
    """Why a series is shown and what its numbers are: its own mean MASE, the fold it is drawn on, the baseline's."""
    own, n_folds = series_mase(metrics, uid)
    rank = {"best": "the lowest", "worst": "the highest", "median": "the median"}[name]
    where = {"best": "its best fold", "worst": "its worst fold", "median": "its last fold"}[name]
    cutoff, mase = fold
    text = (
        f"Shown as the {name} series: {rank} seq2seq mean MASE over its folds ({readable(own)} over "
        f"{n_folds}), drawn on {where} (cutoff {pd.Timestamp(cutoff).date()}, MASE {readable(mase)})"
    )
    if reference:
        theirs = series_mase(metrics, uid, reference)[0]
        if np.isfinite(theirs):
            text += f"; {label(reference)}'s mean MASE on it {readable(theirs)}"
    return text + "."


def glossary() -> list[str]:
    """The glossary: every column of the report's tables and CSVs, in words."""
    lines = ["## Glossary", "", "Every column of the tables above and of the CSVs, in words.", ""]
    for shown, csv, words in GLOSSARY:
        name = f"**{shown}**" + (f" (`{csv}`)" if csv and csv != shown else "")
        lines.append(f"- {name}: {words}.")
    return [*lines, ""]


def figure(caption: str, name: str, note: str = "") -> list[str]:
    """A figure of the report with its caption (and the reason it shows what it shows)."""
    return [*([note, ""] if note else []), f"![{caption}]({name})", ""]


def by_step_table(by_step: pd.DataFrame) -> list[str]:
    return [
        "### MASE by horizon step, per step",
        "",
        "Each model's mean scaled absolute error at each horizon step (the figure above, in numbers).",
        "",
        markdown_table(by_step),
        "",
    ]


def _everything(verdict: dict) -> bool:
    """Whether the verdict covers every series and every forecast point."""
    return verdict["series"] == verdict["series_total"] and verdict["points"] == verdict["points_total"]


def verdict_line(verdict: dict | None, skipped: pd.DataFrame) -> str:
    """What the verdict rests on, in one sentence: the windows scored and what was left out. The series and forecast
    points it covers are the first sentence's (``verdict_sentence``); this one does not repeat them."""
    windows = "1 series-fold window" if len(skipped) == 1 else f"{len(skipped):,} series-fold windows"
    left_out = f"{windows} left out, {'listed' if len(skipped) == 1 else 'each listed'} with its reason in skipped.csv"
    if verdict is None:
        return f"The verdict leaves out {left_out}." if len(skipped) else "Every series-fold window is scored."
    horizon = verdict["points_total"] // max(verdict["windows_total"], 1)
    unobserved = max(verdict["points_total"] - verdict["points"] - len(skipped) * horizon, 0)  # in scored windows
    if len(skipped):
        line = f"The verdict scores {verdict['windows']:,} of {verdict['windows_total']:,} series-fold windows; {left_out}"
    else:
        line = f"Every one of the {verdict['windows_total']:,} series-fold windows is scored"
    if unobserved:
        line += f"; {unobserved:,} forecast point{'s' if unobserved > 1 else ''} had no actual to score against"
    early = verdict.get("early_series", 0)  # absent from results written before 0.17.6
    if early:
        one = early == 1
        line += (
            f". {early:,} series end before the others and {'is' if one else 'are'} scored from "
            f"{'its' if one else 'their'} own ends, by models trained on the other series' later periods too (the "
            "cutoffs per fold are in the settings)"
        )
    return line + "."


def attention_facts(diagnostics, check: dict | None, season: int) -> str:
    """The attention section's numbers in words, above its maps: the occlusion ratios of the last fold's check (with
    a warning when the maps are not an explanation), the padding mass, the entropy, the last season's share, and
    the same per horizon step as a table."""
    faithful = (
        f"- occlusion ratio: {check['ratio']:.2f} (the last fold, {check['n_series']} series): replacing each series' "
        "3 most attended history points by its mean moves the forecast that many times as much as replacing the 3 "
        "least attended. Above 1, the map points at what drives the forecast; below 1, away from it.\n"
        if check
        else ""
    )
    if check and "share_ratio" in check:
        faithful += (
            f"- the shares' occlusion ratio: {check['share_ratio']:.2f}: the same check with the 3 points of the "
            "largest and the 3 of the smallest share of the forecast (the bars under each map).\n"
        )
    warning = occlusion_warning(check["ratio"] if check else None)
    return (
        (f"{warning}\n\n" if warning else "")
        + faithful
        + f"- attention mass on padded positions (must be 0): {readable(diagnostics.padded_mass)}\n"
        f"- mean attention entropy: {readable(diagnostics.mean_entropy)} nats "
        f"({diagnostics.normalised_entropy:.2f} of uniform)\n"
        f"- share of attention on the last season ({season} periods) before the origin: "
        f"{readable(diagnostics.last_season_share)}\n\n" + markdown_table(diagnostics.by_step)
    )
