"""Accuracy metrics: numpy kernels plus a frame wrapper for backtests.

MASE divides the mean absolute error over the horizon by the in-sample mean absolute
seasonal difference of the *training* data only (Hyndman & Koehler, 2006), computed by the
one kernel :func:`forecaster.data.scaling.mase_scale` that also weighs the training loss. A zero
scale (a flat training history) yields NaN and is counted, never turned into inf.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..data.quantile_loss import level_loss, pinball
from ..data.scaling import mase_scale, naive_error_table
from ..model.outputs import quantile_column


def seasonal_scale(history: np.ndarray, season_length: int) -> float:
    """MASE scale of one training history (see :func:`forecaster.data.scaling.mase_scale`).

    Lag ``m`` when the history has more than ``m`` periods and an observed lag-``m`` pair, lag 1 otherwise;
    NaN pairs skipped.
    """
    history = np.asarray(history, dtype=np.float64)
    if len(history) < 2:
        return float("nan")
    table = naive_error_table(history[None, :], season_length, np.zeros(1, dtype=np.int64))
    return float(mase_scale(table, np.array([0]), np.array([len(history) - 1]))[0])


def seasonal_scales(train: pd.DataFrame, season_length: int, id_col: str = "unique_id", target_col: str = "y") -> pd.Series:
    """:func:`seasonal_scale` of every series of a long frame with one row per period (sorted by time within series).

    The rows of each series are laid out left-aligned in one padded array and scored by the
    same kernel as the backtest and the training loss.
    """
    codes, ids = pd.factorize(train[id_col], sort=False)
    position = train.groupby(codes, sort=False).cumcount().to_numpy()
    lengths = np.bincount(codes, minlength=len(ids))
    y = np.full((len(ids), int(lengths.max()) if len(ids) else 0), np.nan)
    y[codes, position] = train[target_col].to_numpy(dtype=np.float64)
    table = naive_error_table(y, season_length, np.zeros(len(ids), dtype=np.int64))
    scales = mase_scale(table, np.arange(len(ids)), lengths - 1)
    scales = np.where(lengths >= 2, scales, np.nan)
    return pd.Series(scales, index=pd.Index(ids, name=id_col), name="scale")


def smape_terms(actual: np.ndarray, forecast: np.ndarray) -> np.ndarray:
    """Each period's symmetric absolute percentage error (0..200): 0 where both are 0, NaN where either is missing.

    The one sMAPE kernel: a series' sMAPE is the mean of its terms (:func:`score_forecasts`).
    """
    actual, forecast = np.asarray(actual, dtype=float), np.asarray(forecast, dtype=float)
    denominator = np.abs(actual) + np.abs(forecast)
    terms = np.where(denominator > 0, 200.0 * np.abs(actual - forecast) / np.where(denominator > 0, denominator, 1.0), 0.0)
    return np.where(np.isnan(actual) | np.isnan(forecast), np.nan, terms)


def score_forecasts(
    forecasts: pd.DataFrame,
    scales: pd.DataFrame,
    models: list[str],
    intervals: dict[str, tuple[str, str]],
    id_col: str = "unique_id",
    quantiles: dict[str, dict[float, str]] | None = None,
) -> pd.DataFrame:
    """Per (series, cutoff, model) MASE, sMAPE, interval coverage and the periods scored, vectorised over groups.

    Args:
        forecasts: long frame with ``id_col``, ``cutoff``, ``y`` and one column per model.
        scales: ``id_col``, ``cutoff``, ``scale`` (the fold's training MASE scale).
        intervals: model -> (lower, upper) column names, for coverage.
        quantiles: model -> its column per level (:func:`quantile_columns`), where the interval's bounds are two of them.

    Coverage is the share of the interval a randomized PIT puts an actual in (:func:`interval_shares`): 1 inside, 0
    outside, and for an actual equal to quantiles, the part of its span between the bounds' levels, as
    ``hit_shares`` counts each level's hits. A closed period forecast at zero at every level counts 0.8 of a hit for
    the 10-90% interval, not a whole one: counted whole, such periods read as an interval too wide where the open ones
    held 80%.
    """
    keys = [id_col, "cutoff"]
    rows = []
    y = forecasts["y"].to_numpy(dtype=float)
    for model in models:
        f = forecasts[model].to_numpy(dtype=float)
        part = pd.DataFrame(
            {
                id_col: forecasts[id_col].to_numpy(),
                "cutoff": forecasts["cutoff"].to_numpy(),
                "abs_error": np.abs(y - f),  # NaN where the actual or the forecast is missing: not scored
                "smape": smape_terms(y, f),
            }
        )
        if model in intervals:
            lower, upper = (forecasts[c].to_numpy(dtype=float) for c in intervals[model])
            inside = interval_shares(forecasts, y, intervals[model], (quantiles or {}).get(model))
            part["coverage"] = np.where(np.isnan(y) | np.isnan(lower) | np.isnan(upper), np.nan, inside)
        groups = part.groupby(keys, sort=False)
        grouped = groups.mean().reset_index()
        grouped["n_points"] = groups["abs_error"].count().to_numpy()  # periods scored: an actual and a forecast
        grouped.insert(2, "model", model)
        rows.append(grouped)
    metrics = pd.concat(rows, ignore_index=True).merge(scales, on=keys, how="left")
    zero = ~(metrics["scale"] > 0)
    metrics["mase"] = np.where(zero, np.nan, metrics["abs_error"] / metrics["scale"].where(~zero, 1.0))
    metrics["zero_scale"] = zero
    columns = [id_col, "cutoff", "model", "mase", "smape", "abs_error", "scale", "zero_scale", "n_points"]
    if "coverage" in metrics:
        columns.append("coverage")
    return metrics[columns]


def interval_shares(
    forecasts: pd.DataFrame, y: np.ndarray, bounds: tuple[str, str], columns: dict[float, str] | None
) -> np.ndarray:
    """Each period's share of being inside the interval ``bounds`` (lower, upper columns): the randomized PIT's chance
    of falling between their levels, read from every quantile of ``columns`` that holds both bounds (ties spread as
    :func:`hit_shares` spreads them); without them, the two bounds as a central 80% interval."""
    by_column = {column: level for level, column in (columns or {}).items()}
    if all(bound in by_column for bound in bounds):
        ordered = sorted(by_column.items(), key=lambda item: item[1])
    else:
        ordered = [(bounds[0], 0.1), (bounds[1], 0.9)]
    names, levels = [c for c, _ in ordered], np.array([lv for _, lv in ordered])
    shares = hit_shares(y, forecasts[names].to_numpy(dtype=float), levels)
    return shares[:, names.index(bounds[1])] - shares[:, names.index(bounds[0])]


def quantile_columns(models: list[str], levels) -> dict[str, dict[float, str]]:
    """Each model's forecast column per level: ``<model>_q10`` and so on, the model's own column at the median.

    The naming of backtest forecasts (``seq2seq_q10``, ``auto_ets_q10``), for :func:`score_quantiles`.
    """
    suffix = {float(q): quantile_column(float(q))[len("y_hat") :] for q in levels}
    return {m: {q: m if q == 0.5 else m + end for q, end in suffix.items()} for m in models}


def score_quantiles(
    forecasts: pd.DataFrame, quantile_columns: dict[str, dict[float, str]], id_col: str = "unique_id"
) -> pd.DataFrame:
    """Per (series, cutoff, model, level): the pinball loss summed over the horizon, hits, scored periods, sum of ``|y|``.

    ``quantile_columns`` maps each model to its forecast column per level. A hit is an actual at or
    below the quantile forecast (a calibrated level-q forecast is hit a share q of the time).
    Periods without an actual or a forecast are not scored. An actual equal to a quantile forecast (a count at zero,
    a closed period forecast at zero) is a share of a hit (:func:`hit_shares`), not a whole one. Sums, not means, so that
    :func:`weighted_quantile_loss` can pool any set of rows.
    """
    keys = [id_col, "cutoff"]
    y = forecasts["y"].to_numpy(dtype=float)
    parts = []
    for model, columns in quantile_columns.items():
        ordered = sorted(columns.items())
        shares = hit_shares(y, forecasts[[c for _, c in ordered]].to_numpy(dtype=float), np.array([lv for lv, _ in ordered]))
        for level, column in columns.items():
            f = forecasts[column].to_numpy(dtype=float)
            ok = np.isfinite(y) & np.isfinite(f)
            diff = np.where(ok, y - f, 0.0)
            part = pd.DataFrame(
                {
                    id_col: forecasts[id_col].to_numpy(),
                    "cutoff": forecasts["cutoff"].to_numpy(),
                    "pinball": pinball(diff, level),
                    "hits": np.where(ok, shares[:, [lv for lv, _ in ordered].index(level)], 0.0),
                    "n": ok.astype(np.int64),
                    "abs_y": np.where(ok, np.abs(y), 0.0),
                }
            )
            grouped = part.groupby(keys, sort=False).sum().reset_index()
            grouped.insert(2, "model", model)
            grouped.insert(3, "level", float(level))
            parts.append(grouped)
    columns = [*keys, "model", "level", "pinball", "hits", "n", "abs_y"]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)


def hit_shares(y: np.ndarray, quantiles: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """(N, K) each period's hit at each level: 1 where the actual ``y`` is below the level's quantile forecast, 0 above,
    and where it equals it, the expected hit of a randomized PIT (Czado, Gneiting and Held 2009, for counts).

    ``quantiles`` (N, K) are ordered along ``levels`` (ascending). An actual equal to the quantiles of levels a..b lies,
    by the forecast's own distribution, anywhere between the levels either side of that run (taken halfway to the
    next level, 0 or 1 at the ends): its hit at level t is the share of that span below t. A count at zero that a
    forecast puts at its 10-40% quantiles therefore counts a fraction at each, where "at or below" counted it at every
    level (q10 "hit" 47% on a panel of products selling nothing half the days, a calibrated forecast's rate there); an
    actual equal to every quantile (a closed period forecast at zero) counts about each level's own share.
    """
    below = (y[:, None] < quantiles).astype(np.float64)
    tie = y[:, None] == quantiles
    if not tie.any():
        return below
    k = len(levels)
    first = np.argmax(tie, axis=1)
    last = k - 1 - np.argmax(tie[:, ::-1], axis=1)
    edges = np.concatenate([[0.0], (levels[:-1] + levels[1:]) / 2, [1.0]])  # halfway between levels, 0 and 1 outside
    low, high = edges[first], edges[last + 1]
    inside = np.clip((levels[None, :] - low[:, None]) / (high - low)[:, None], 0.0, 1.0)
    return np.where(tie, inside, below)


def weighted_quantile_loss(scores: pd.DataFrame) -> pd.Series:
    """Per model: the mean over levels of ``2 * sum(pinball loss) / sum(|y|)``, pooled over every scored row.

    The definition of the probabilistic benchmarks (``data.quantile_loss``, whose kernels score each level). NaN where
    ``sum(|y|)`` is 0.
    """
    pooled = scores.groupby(["model", "level"], sort=False)[["pinball", "abs_y"]].sum()
    loss = level_loss(pooled["pinball"].to_numpy(), pooled["abs_y"].to_numpy())
    per_level = pd.Series(loss, index=pooled.index)
    return per_level.groupby(level="model", sort=False).mean().rename("wql")


def hit_rates(scores: pd.DataFrame, by: Sequence[str] = ()) -> pd.DataFrame:
    """Model (and each key of ``by``) x level: the share of actuals at or below each quantile forecast.

    A calibrated forecast's share equals the level; levels are in ascending order. ``by`` names further
    columns of ``scores`` to split the rows by (``["fold"]``: one row per model and fold).
    """
    pooled = scores.groupby(["model", *by, "level"], sort=False)[["hits", "n"]].sum()
    rate = pooled["hits"] / pooled["n"].where(pooled["n"] > 0)
    return rate.unstack("level").sort_index(axis=1)


def fold_numbers(metrics: pd.DataFrame, n_windows: int) -> pd.Series:
    """The fold (1 = earliest) of each row of ``metrics``.

    Series ending at different times have different cutoffs in one fold, so the fold is counted per
    series from its last cutoff: a series skipped in a fold (too short) is skipped in every earlier one.
    """
    from_last = metrics.groupby("unique_id")["cutoff"].rank(method="dense", ascending=False).astype(int)
    return n_windows - from_last + 1
