"""The numbers a backtest report shows, computed from a result's frames: what the model is compared with, per-fold,
per-step and per-series comparisons, the calibration of each fold, the series picked to draw and their folds.

The report modules only assemble and write what these functions return.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .metrics import fold_numbers
from .scoring import describe_cutoffs

# The model's name in a backtest's frames (its forecast column and its rows of metrics).
MODEL = "seq2seq"


def reference_model(models: list[str], model: str = MODEL) -> str | None:
    """What the model is measured against: AutoETS when it ran, else the first baseline, else None."""
    others = [m for m in models if m != model]
    return "auto_ets" if "auto_ets" in others else (others[0] if others else None)


def per_fold(metrics: pd.DataFrame, models: list[str], n_windows: int, cutoffs: list[str] | None = None) -> pd.DataFrame:
    """One row per fold and model: its cutoff, mean MASE, interval coverage and series scored."""
    frame = metrics.assign(fold=fold_numbers(metrics, n_windows))
    rows = []
    for (fold, model), part in frame.groupby(["fold", "model"], sort=False):
        described = describe_cutoffs(part["cutoff"])
        row = {"fold": int(fold), "cutoff": cutoffs[fold - 1] if cutoffs and len(cutoffs) == n_windows else described}
        row |= {"model": model, "mean_mase": part["mase"].mean()}
        if "coverage" in part:
            row["coverage"] = part["coverage"].mean()
        row["n_scored"] = int(part["mase"].notna().sum())
        rows.append(row)
    order = {m: i for i, m in enumerate(models)}
    table = pd.DataFrame(rows)
    return table.sort_values(["fold", "model"], key=lambda c: c.map(order) if c.name == "model" else c, ignore_index=True)


def calibration_by_fold(rates: pd.DataFrame, coverage: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per fold and model from ``calibration(by="fold")``: the outermost interval's coverage and the worst level.

    ``coverage``: :func:`per_fold`'s table, whose ``coverage`` (each series' share of actuals inside the interval,
    averaged over the fold's series, as every other table of the report counts it) is the one shown; without it, the
    column is empty. It is not the hit rate of the highest level less that of the lowest: an actual equal to the lowest
    quantile (a closed period forecast at zero) is inside the interval, and a hit at both levels. ``worst_level`` is the
    level whose hit rate lies furthest from it, and ``off_points`` that distance in points.
    """
    if not len(rates):
        return pd.DataFrame(columns=["fold", "model", "coverage", "worst_level", "off_points"])
    rates = rates.sort_index(axis=1)
    levels = np.asarray(rates.columns, dtype=float)
    gaps = (rates - levels[None, :]).abs()
    worst = gaps.idxmax(axis=1)
    table = pd.DataFrame(
        {
            "worst_level": worst.map(lambda level: f"q{float(level) * 100:g}"),
            "off_points": 100 * gaps.max(axis=1),
        }
    ).reset_index()
    shown = coverage[["fold", "model", "coverage"]] if coverage is not None and "coverage" in coverage else None
    table = table.merge(shown, on=["fold", "model"], how="left") if shown is not None else table.assign(coverage=np.nan)
    table = table[["fold", "model", "coverage", "worst_level", "off_points"]]
    return table.sort_values("fold", kind="stable", ignore_index=True)


def paired(metrics: pd.DataFrame, reference: str, model: str = MODEL) -> pd.DataFrame:
    """Per series, over the folds where both are scored: mean MASE of each, their difference and ratio."""
    wide = metrics.pivot_table(index=["unique_id", "cutoff"], columns="model", values="mase", dropna=False)
    if model not in wide or reference not in wide:
        return pd.DataFrame(columns=["unique_id", f"{model}_mase", f"{reference}_mase", "difference", "ratio", "n_folds"])
    both = wide[[model, reference]].dropna()
    means = both.groupby(level="unique_id").mean()
    table = pd.DataFrame(
        {
            f"{model}_mase": means[model],
            f"{reference}_mase": means[reference],
            "difference": means[model] - means[reference],
            "ratio": means[model] / means[reference].replace(0.0, np.nan),
            "n_folds": both.groupby(level="unique_id").size(),
        }
    )
    return table.rename_axis("unique_id").reset_index()


def leaderboard(metrics: pd.DataFrame, reference: str, model: str = MODEL, n: int = 10) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``n`` series where the model beats ``reference`` most, and the ``n`` where it loses most."""
    table = paired(metrics, reference, model)
    gains = table[table["difference"] < 0].sort_values(["difference", "unique_id"]).head(n)
    losses = table[table["difference"] > 0].sort_values(["difference", "unique_id"], ascending=[False, True]).head(n)
    return gains.reset_index(drop=True), losses.reset_index(drop=True)


def representative_series(metrics: pd.DataFrame, model: str = MODEL, reference: str | None = None) -> dict[str, object]:
    """Best, median and worst series of ``model``, by its own mean MASE over the folds it scored.

    A series is best or worst by how well ``model`` forecast it, not by how it fared against a baseline (a series
    with MASE 6.5 is not "best" because AutoETS did worse). A series forecast exactly in every fold (MASE 0: closed
    throughout, forecast at zero) is left out where others were scored: it shows nothing of the forecast's quality.
    ``reference`` is accepted for calls that pass it and unused.
    """
    del reference
    scores = metrics[metrics["model"] == model].groupby("unique_id")["mase"].mean().dropna()
    if scores.empty:
        return {}
    if (scores > 0).any():  # an exact forecast (closed throughout, forecast at zero) shows nothing of its quality
        scores = scores[scores > 0]
    ranked = scores.rename("mase").rename_axis("unique_id").reset_index().sort_values(["mase", "unique_id"], ignore_index=True)
    ids = ranked["unique_id"]
    return {"best": ids.iloc[0], "median": ids.iloc[len(ids) // 2], "worst": ids.iloc[-1]}


def pick_folds(metrics: pd.DataFrame, picks: dict, model: str = MODEL) -> dict[str, tuple[pd.Timestamp, float]]:
    """The fold each pick is drawn on and its MASE there: the best on its best fold, the worst on its worst, the
    median on its last (the fold whose attention the backtest keeps). A fold forecast exactly (MASE 0: a day the
    closures forecast at zero throughout) is not the best one where another fold was scored."""
    own = metrics[(metrics["model"] == model) & metrics["mase"].notna()]
    chosen = {}
    for name, uid in picks.items():
        rows = own[own["unique_id"] == uid].sort_values("cutoff")
        if rows.empty:
            continue
        inexact = rows[rows["mase"] > 0] if (rows["mase"] > 0).any() else rows  # not a window forecast exactly
        at = {"best": inexact["mase"].idxmin(), "worst": rows["mase"].idxmax()}.get(name, rows.index[-1])
        chosen[name] = (rows.loc[at, "cutoff"], float(rows.loc[at, "mase"]))
    return chosen


def mase_by_step(forecasts: pd.DataFrame, metrics: pd.DataFrame, models: list[str]) -> pd.DataFrame:
    """Mean scaled absolute error per horizon step and model (zero-scale series excluded)."""
    scales = metrics.drop_duplicates(["unique_id", "cutoff"])[["unique_id", "cutoff", "scale"]]
    frame = forecasts.merge(scales, on=["unique_id", "cutoff"], how="left")
    frame = frame[frame["scale"] > 0]
    step = frame.groupby(["unique_id", "cutoff"]).cumcount() + 1
    errors = {m: (frame[m] - frame["y"]).abs() / frame["scale"] for m in models}
    return pd.DataFrame(errors).assign(step=step.to_numpy()).groupby("step").mean()


def relative_mase(metrics: pd.DataFrame, models: list[str], reference: str = "auto_ets") -> dict[str, pd.Series] | None:
    """Per series and fold, log2 of each other model's MASE over the reference's (zero and infinite ratios left out);
    None when the reference did not run."""
    wide = metrics.pivot_table(index=["unique_id", "cutoff"], columns="model", values="mase")
    if reference not in wide:
        return None
    return {
        model: np.log2((wide[model] / wide[reference]).replace([np.inf, 0], np.nan).dropna())
        for model in [m for m in models if m != reference]
    }


def paired_with(metrics: pd.DataFrame, baselines: list[str], model: str = MODEL) -> list[tuple[str, pd.DataFrame]]:
    """:func:`paired` against each baseline, for the baselines scored on at least one series with the model."""
    pairs = [(baseline, paired(metrics, baseline, model)) for baseline in baselines]
    return [(baseline, table) for baseline, table in pairs if len(table)]


def better_and_worse(table: pd.DataFrame) -> tuple[int, int]:
    """How many series of a :func:`paired` table the model forecast better than the reference, and how many worse."""
    return int((table["difference"] < 0).sum()), int((table["difference"] > 0).sum())


def series_mase(metrics: pd.DataFrame, unique_id, model: str = MODEL) -> tuple[float, int]:
    """One series' mean MASE under ``model`` over the folds where it is scored, and how many folds those are."""
    own = metrics[(metrics["model"] == model) & (metrics["unique_id"] == unique_id)]["mase"]
    return own.mean(), int(own.notna().sum())


def wql_ratio(summary: pd.DataFrame, reference: str | None, model: str = MODEL) -> float | None:
    """The model's WQL over the reference's; None without WQL, without a reference or when its WQL is not positive."""
    if "wql" not in summary or not reference:
        return None
    theirs = summary.loc[reference, "wql"]
    if not (np.isfinite(theirs) and theirs > 0):
        return None
    return float(summary.loc[model, "wql"] / theirs)


def distinct_picks(picks: dict) -> tuple[dict, dict[str, list[str]]]:
    """The picks with each series once (a series that is also a later pick, say best and median, is drawn once), and
    for each pick kept, the names of the later picks that are the same series."""
    kept: dict = {}
    also: dict[str, list[str]] = {}
    for name, uid in picks.items():
        first = next((n for n, u in kept.items() if u == uid), None)
        if first is None:
            kept[name] = uid
        else:
            also.setdefault(first, []).append(name)
    return kept, also


def attention_scale(attention: pd.DataFrame, ids) -> float | None:
    """The top of one colour scale for the attention maps of the series ``ids``: their largest weight off padding
    (None when none of them is in ``attention``)."""
    shown = attention[attention["unique_id"].isin(list(ids))]
    shown = shown[~shown["padded"]] if "padded" in shown else shown
    return float(shown["weight"].max()) if len(shown) else None
