"""Scoring a backtest's folds: the model's forecasts labelled with their cutoffs, each window's MASE scale, and the
metrics of every model against the actuals.

Scoring is model-independent: the scales come from each fold's training rows (:func:`fold_scales`, through the one
MASE kernel, ``data.scaling.mase_scale``, which also weighs the training loss), and the scorer
(:func:`scored_forecasts`) sees forecast columns, actuals and scales only, scoring the model and the baselines alike
with ``metrics.score_forecasts``' one MASE and one sMAPE.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data.panel import Panel, layout
from ..data.scaling import mase_scale, naive_error_table
from ..data.validation import Columns, restore_zone, when
from ..model.fitted import FittedModel
from ..model.inference import Forecast
from ..model.outputs import forecast_frame, quantile_column
from .folds import Fold
from .metrics import quantile_columns, score_forecasts, score_quantiles

MODEL_NAME = "seq2seq"


def label(panel: Panel, forecast: Forecast, model: FittedModel, requested) -> pd.DataFrame:
    """Forecast rows of the core's windows, with their cutoff and the model's column names.

    ``requested``: the quantile levels the estimator was asked for (None: point forecasts).
    """
    out = forecast_frame(panel, forecast, model.state.quantiles, requested, model.columns.id, model.columns.time, None)
    cutoffs = panel.timestamps(forecast.series, forecast.origins)
    out.insert(1, "cutoff", np.repeat(cutoffs, forecast.quantiles.shape[1]))
    return out.rename(columns=quantile_renames(requested))


def fold_scales(train: pd.DataFrame, fold: Fold, columns: Columns, season: int, offset: pd.DateOffset) -> pd.DataFrame:
    """The MASE scale of each window of ``fold`` (``unique_id``, ``cutoff``, ``scale``) from the fold's training rows.

    Each series' history, from its first row to its cutoff, is laid on the calendar of ``offset`` (missing periods
    stay missing) and goes through the one kernel (``data.scaling.mase_scale``): the scale depends on the data the
    fold gives every model, never on a model. ``offset`` is the frequency alias's calendar, the one the model's
    panel and the scores have always used (for a business-day calendar with holidays it differs from the calendar
    the cutoffs sit on, ``FoldPlan.offset``: a holiday is a missing period here).
    """
    codes, uniques, _, pos, end, length = layout(train, columns, offset, 0, 0, fill_gaps=True)
    start = end - length + 1
    y = np.full((len(uniques), int(length.max()) if len(length) else 0), np.nan)
    y[codes, pos - start[codes]] = train[columns.target].to_numpy(dtype=np.float64)
    rows = np.arange(len(uniques))
    table = naive_error_table(y, season, np.zeros(len(uniques), dtype=np.int64))
    ids = np.asarray(uniques)
    return pd.DataFrame(
        {"unique_id": ids, "cutoff": fold.cutoffs.reindex(ids).to_numpy(), "scale": mase_scale(table, rows, length - 1)}
    )


def scored_forecasts(
    predictions: list[pd.DataFrame],
    baseline_frames: list[pd.DataFrame | None],
    scales: list[pd.DataFrame],
    frame: pd.DataFrame,
    columns: Columns,
    requested,
    baselines: tuple[str, ...],
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The forecasts of every model beside the actuals, their metrics per window, and their quantile scores.

    ``predictions`` and ``scales`` are the model's labelled forecasts and MASE scales, fold by fold;
    ``frame`` holds the actuals; ``requested`` the model's quantile levels. A Dask backtest calls this on each
    partition's folds.
    """
    keys = [columns.id, "cutoff", columns.time]
    forecasts = pd.concat(predictions, ignore_index=True)
    baseline_frames = [b for b in baseline_frames if b is not None]
    if baseline_frames:
        forecasts = forecasts.merge(pd.concat(baseline_frames, ignore_index=True), on=keys, how="left")
    actual = frame[[columns.id, columns.time, columns.target]].rename(columns={columns.target: "y"})
    forecasts = forecasts.merge(actual, on=[columns.id, columns.time], how="left")
    rest = [c for c in forecasts.columns if c not in (*keys, "y")]
    forecasts = forecasts[[*keys, "y", *rest]].rename(columns={columns.id: "unique_id", columns.time: "ds"})
    scale_frame = pd.concat(scales, ignore_index=True)
    models = [MODEL_NAME, *baselines]
    levels = model_quantile_columns(requested, baselines)
    metrics = score_forecasts(forecasts, scale_frame, models, interval_columns(requested, baselines), quantiles=levels)
    return forecasts, metrics, score_quantiles(forecasts, levels)


def interval_columns(requested, baselines) -> dict[str, tuple[str, str]]:
    """Each model's (lower, upper) columns for ``coverage``: the model's outermost quantiles for every model.

    The baselines are scored on the same interval as the model (their quantiles at its levels), so the
    coverage column compares like with like; without model quantiles, their 80% interval.
    """
    intervals = {b: (f"{b}_lo", f"{b}_hi") for b in baselines}
    if requested is not None and len(requested) >= 2:
        names = quantile_renames(requested)
        lo, hi = float(min(requested)), float(max(requested))
        intervals[MODEL_NAME] = (names[quantile_column(lo)], names[quantile_column(hi)])
        columns = model_quantile_columns(requested, baselines)
        intervals |= {b: (columns[b][lo], columns[b][hi]) for b in baselines}
    return intervals


def model_quantile_columns(requested, baselines) -> dict[str, dict[float, str]]:
    """Each model's forecast column per quantile level: the model's levels, for the model and every baseline."""
    levels = [] if requested is None else sorted({float(q) for q in requested} | {0.5})
    if len(levels) < 2:
        return {}
    return quantile_columns([MODEL_NAME, *baselines], levels)


def quantile_renames(requested) -> dict[str, str]:
    """The estimator's forecast columns (``y_hat``, ``y_hat_q10``, ...) under the model's name in a backtest."""
    names = {"y_hat": MODEL_NAME}
    for q in () if requested is None else requested:
        column = quantile_column(float(q))
        names[column] = MODEL_NAME + column[len("y_hat") :]
    return names


def with_zone(times: pd.Series, tz: str) -> pd.Series:
    """Naive timestamps (as the backtest works on them) back in the caller's zone (``validation.restore_zone``)."""
    return pd.Series(restore_zone(pd.DatetimeIndex(times), tz), index=times.index, name=times.name)


def in_zone(forecasts: pd.DataFrame, *scores: pd.DataFrame, tz: str) -> tuple[pd.DataFrame, ...]:
    """``scored_forecasts``' frames with their ``ds`` and ``cutoff`` columns (where they have them) in the caller's zone."""
    return tuple(
        frame.assign(**{c: with_zone(frame[c], tz) for c in ("ds", "cutoff") if c in frame}) for frame in (forecasts, *scores)
    )


def describe_cutoffs(cutoffs: pd.Series) -> str:
    """A fold's cutoffs in a few words: the date, or the first and last where series differ; dates without a time of
    day when both are at midnight (a range read "2024-08-25 .. 2024-11-03 00:00:00")."""
    low, high = cutoffs.min(), cutoffs.max()
    dates = low == low.normalize() and high == high.normalize()
    return str(low.date() if dates else low) + ("" if low == high else f" .. {high.date() if dates else high}")


def unscored_windows(metrics: pd.DataFrame, folds: list[Fold], tz: str | None = None) -> list[dict]:
    """Every window (series, fold) that a fold forecast but whose model MASE the verdict cannot count, with the reason.

    A window goes unscored when its horizon holds no observed target, or when its MASE scale is zero or undefined
    (a history that never changes at the seasonal lag, or without an observed pair); rows as ``skipped.csv`` lists
    them (``unique_id``, ``fold``, ``reason``), beside the series each fold skipped before forecasting. ``metrics``
    and ``folds`` hold naive timestamps; the reasons name each cutoff in the caller's zone ``tz``.
    """
    own = metrics[(metrics["model"] == MODEL_NAME) & ~np.isfinite(metrics["mase"].to_numpy(dtype=float))]
    if own.empty:
        return []
    index = pd.concat(
        [pd.DataFrame({"unique_id": f.cutoffs.index, "cutoff": f.cutoffs.to_numpy(), "fold": f.number}) for f in folds]
    )
    own = own.merge(index, on=["unique_id", "cutoff"], how="left")
    no_actual = ~np.isfinite(own["abs_error"].to_numpy(dtype=float))
    zero = own["scale"].to_numpy(dtype=float) == 0
    reasons = np.where(
        no_actual,
        "no observed target in the fold's horizon",
        np.where(
            zero,
            "MASE undefined: the history up to the cutoff never changes at the seasonal lag (zero scale); "
            "in WQL and coverage only",
            "MASE undefined: no pair of observed targets to scale by; in WQL and coverage only",
        ),
    )
    distinct = pd.Series(pd.unique(own["cutoff"]))
    shown = with_zone(distinct, tz) if tz else distinct
    named = dict(zip(distinct, (describe_cutoffs(pd.Series([c])) for c in shown), strict=True))  # once per cutoff
    cut = own["cutoff"].map(named)
    return [
        {"unique_id": uid, "fold": int(fold), "reason": f"{why} (cutoff {when(c)})"}
        for uid, fold, why, c in zip(own["unique_id"], own["fold"], reasons, cut, strict=True)
    ]


def verdict_coverage(metrics: pd.DataFrame, folds: list[Fold], horizon: int, n_series: int) -> dict:
    """How much of the panel the verdict's MASE rests on: series, windows and forecast points scored, of all.

    Every series-fold window of the plan counts in the totals, those skipped before forecasting (a history too short
    for the fold) included, each with ``horizon`` forecast points; a window is scored when its model MASE is defined,
    a point when it lies in such a window and has an observed target (``n_points``). ``n_series``: the panel's.
    """
    own = metrics[metrics["model"] == MODEL_NAME]
    scored = own[np.isfinite(own["mase"].to_numpy(dtype=float))]
    windows_total = len(own) + sum(len(fold.skipped) for fold in folds)
    early = [fold.cutoffs.index[fold.cutoffs < fold.cutoffs.max()] for fold in folds if len(fold.cutoffs)]
    return {
        # series cut before their fold's latest cutoff (they end before the others), each counted once
        "early_series": int(pd.Index([]).append(early).nunique()) if early else 0,
        "series": int(scored["unique_id"].nunique()),
        "series_total": int(n_series),
        "windows": len(scored),
        "windows_total": int(windows_total),
        "points": int(scored["n_points"].sum()),
        "points_total": int(windows_total * horizon),
    }
