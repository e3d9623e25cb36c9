"""Scoring a backtest's folds: the model's forecasts labelled with their cutoffs, each window's MASE scale, and the
metrics of every model against the actuals.

The scorer itself (:func:`scored_forecasts`) sees forecast columns, actuals and scales only: it scores the model and
the baselines alike, through the one MASE kernel (``data.scaling.mase_scale``, the training loss weights' kernel too)
and ``metrics.score_forecasts``' one sMAPE. A scale is each window's history up to its origin, in the target's units.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data.panel import Panel
from ..data.scaling import mase_scale, naive_error_table
from ..data.validation import Columns, restore_zone
from ..model.fitted import FittedModel
from ..model.inference import Forecast, target_values
from ..model.outputs import forecast_frame, quantile_column
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


def window_scales(panel: Panel, forecast: Forecast, model: FittedModel, season: int) -> pd.DataFrame:
    """The MASE scale of each window (``unique_id``, ``cutoff``, ``scale``) from its series' history up to its origin."""
    table = naive_error_table(target_values(panel, model.state), season, panel.first_col)
    return pd.DataFrame(
        {
            "unique_id": panel.ids[forecast.series],
            "cutoff": panel.timestamps(forecast.series, forecast.origins),
            "scale": mase_scale(table, forecast.series, forecast.origins),
        }
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
    metrics = score_forecasts(forecasts, scale_frame, models, interval_columns(requested, baselines))
    return forecasts, metrics, score_quantiles(forecasts, model_quantile_columns(requested, baselines))


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
    """A fold's cutoffs in a few words: the date, or the first and last where series differ."""
    low, high = cutoffs.min(), cutoffs.max()
    return str(low.date() if low == low.normalize() else low) + ("" if low == high else f" .. {high}")
