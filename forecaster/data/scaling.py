"""Per-window target scaling, computed from the encoder window only.

Scale statistics never see a value after the forecast origin: the caller passes
the encoder window (history) and gets ``loc`` and ``scale`` per window.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SCALERS = ("standard", "robust", "meanabs")


def window_stats(history: np.ndarray, scaler: str) -> tuple[np.ndarray, np.ndarray]:
    """Location and scale of each row of ``history`` (B, T), ignoring NaN.

    A zero or non-finite scale (constant window) falls back to ``|loc|``, then to 1,
    so constant series give finite forecasts and no division by zero.
    """
    loc, raw = _raw_stats(history, scaler)
    tiny = _fell_back(loc, raw)
    magnitude = np.abs(loc)
    return loc, np.where(tiny, np.where(magnitude > 0, magnitude, 1.0), raw)


def _raw_stats(history: np.ndarray, scaler: str) -> tuple[np.ndarray, np.ndarray]:
    """Each row's location and its scale statistic before any fallback."""
    observed = np.isfinite(history)
    count = observed.sum(axis=1)
    safe = np.where(observed, history, 0.0)
    if scaler == "standard":
        loc = safe.sum(axis=1) / np.maximum(count, 1)
        centred = np.where(observed, history - loc[:, None], 0.0)
        return loc, np.sqrt((centred**2).sum(axis=1) / np.maximum(count, 1))
    if scaler == "robust":
        with np.errstate(all="ignore"):
            loc = np.nanmedian(np.where(observed, history, np.nan), axis=1)
            q75, q25 = np.nanpercentile(np.where(observed, history, np.nan), [75, 25], axis=1)
        return np.nan_to_num(loc), np.nan_to_num((q75 - q25) / 1.349)
    if scaler == "meanabs":
        return np.zeros(len(history)), np.abs(safe).sum(axis=1) / np.maximum(count, 1)
    raise ValueError(f"`scaler` must be one of {SCALERS}; got {scaler!r}.")


def _fell_back(loc: np.ndarray, raw: np.ndarray) -> np.ndarray:
    """Where the scale statistic is zero (next to the level) or not finite, and the scale falls back."""
    return ~np.isfinite(raw) | (raw <= 1e-8 * np.maximum(np.abs(loc), 1e-300))


def scale_derivatives(history: np.ndarray, scaler: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """How each window's ``loc`` and ``scale`` move with each of its values, for the shares of a forecast.

    Returns ``dloc`` (B, T), the derivative of ``loc`` by each value; ``spread`` (B, T), each value's part of
    the scale, ``(y_t - loc) * d scale / d y_t / scale``, which sums to 1 over a window (the scale is positively
    homogeneous in the deviations from ``loc``); and ``regular`` (B,), False where the scale fell back to
    ``|loc|`` or 1 (a constant window, or a zero interquartile range with ``"robust"``: there the scale does not
    grow with the deviations, and no value gets a part of it). Missing values get 0. Tied values share the
    derivatives of the robust scaler's order statistics equally.
    """
    observed = np.isfinite(history)
    count = np.maximum(observed.sum(axis=1), 1)[:, None]
    loc, raw = _raw_stats(history, scaler)
    regular = ~_fell_back(loc, raw)
    deviation = np.where(observed, history - loc[:, None], 0.0)
    size = np.where(regular, raw, 1.0)[:, None]
    if scaler == "standard":
        dloc = observed / count
        spread = deviation**2 / (count * size**2)
    elif scaler == "meanabs":
        dloc = np.zeros(history.shape)
        spread = np.abs(deviation) / (count * size)
    else:  # robust: median and interquartile range, linear in the order statistics
        quartiles = {q: _quantile_coefficients(history, observed, q) for q in (0.25, 0.5, 0.75)}
        dloc = quartiles[0.5]
        spread = deviation * (quartiles[0.75] - quartiles[0.25]) / 1.349 / size
    return dloc, np.where(regular[:, None], spread, 0.0), regular


def _quantile_coefficients(history: np.ndarray, observed: np.ndarray, q: float) -> np.ndarray:
    """(B, T) the derivative of each row's linearly interpolated ``q`` quantile (numpy's default) by each value.

    Tied values share their order statistics' coefficients equally, so the derivative does not depend on the
    order a sort happens to leave them in.
    """
    rows = np.arange(len(history))
    order = np.argsort(np.where(observed, history, np.inf), axis=1, kind="stable")
    count = observed.sum(axis=1)
    position = np.maximum(count - 1, 0) * q
    low = np.floor(position).astype(np.int64)
    fraction = position - low
    in_order = np.zeros(history.shape)
    np.add.at(in_order, (rows, low), 1.0 - fraction)
    np.add.at(in_order, (rows, np.minimum(low + 1, history.shape[1] - 1)), fraction)
    ranked = np.take_along_axis(np.where(observed, history, np.inf), order, axis=1)
    with np.errstate(invalid="ignore"):  # inf - inf between missing values: each its own run, as it should be
        steps = np.diff(ranked, axis=1) != 0
    run = np.concatenate([np.zeros((len(history), 1), dtype=np.int64), np.cumsum(steps, axis=1)], axis=1)
    totals = np.zeros(history.shape)
    sizes = np.zeros(history.shape)
    np.add.at(totals, (rows[:, None], run), in_order)
    np.add.at(sizes, (rows[:, None], run), 1.0)
    shared = np.take_along_axis(totals / np.maximum(sizes, 1.0), run, axis=1)
    out = np.zeros(history.shape)
    out[rows[:, None], order] = shared
    return out


LOSS_SCALES = ("window", "seasonal_naive")


@dataclass(frozen=True)
class NaiveErrorTable:
    """Running sums of the in-sample naive errors of every series, for O(1) MASE scales at any origin.

    ``sums[k, i, c]`` is the sum of ``|y_t - y_{t - lag_k}|`` over columns ``t < c`` of
    series ``i`` (both values observed), ``counts`` the number of such terms; lag 0 is the
    season length, lag 1 is one period.
    """

    season_length: int
    first_col: np.ndarray  # (N,) first column of each series (columns before it are padding)
    sums: np.ndarray  # (2, N, W + 1)
    counts: np.ndarray  # (2, N, W + 1)


def naive_error_table(y: np.ndarray, season_length: int, first_col: np.ndarray | None = None) -> NaiveErrorTable:
    """Precompute the running naive-error sums of a padded target array ``y`` (N, W).

    ``first_col`` is each row's first column (default: its first observed value).
    """
    if first_col is None:
        seen = np.isfinite(y)
        first_col = np.where(seen.any(axis=1), seen.argmax(axis=1), y.shape[1])
    sums, counts = [], []
    for lag in (max(season_length, 1), 1):
        diff = np.full(y.shape, np.nan)
        if lag < y.shape[1]:
            diff[:, lag:] = np.abs(y[:, lag:] - y[:, :-lag])
        seen = np.isfinite(diff)
        zero = np.zeros((len(y), 1))
        sums.append(np.concatenate([zero, np.where(seen, diff, 0.0).cumsum(axis=1)], axis=1))
        counts.append(np.concatenate([zero, seen.cumsum(axis=1)], axis=1))
    return NaiveErrorTable(max(int(season_length), 1), np.asarray(first_col), np.stack(sums), np.stack(counts))


def _lag_mean(table: NaiveErrorTable, k: int, series: np.ndarray, origins: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Mean naive error with lag ``k`` (0: the season, 1: one period) over pairs inside ``starts .. origins``."""
    lag = table.season_length if k == 0 else 1
    low = np.clip(starts + lag, 0, origins + 1)
    total = table.sums[k, series, origins + 1] - table.sums[k, series, low]
    count = table.counts[k, series, origins + 1] - table.counts[k, series, low]
    with np.errstate(all="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _both_lags(
    table: NaiveErrorTable, series: np.ndarray, origins: np.ndarray, starts: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """The standard MASE scale of each window and its lag-1 scale (NaN where no pair is left)."""
    series, origins = np.asarray(series), np.asarray(origins)
    starts = table.first_col[series] if starts is None else np.asarray(starts)
    by_season = _lag_mean(table, 0, series, origins, starts)
    by_period = _lag_mean(table, 1, series, origins, starts)
    # Lag m needs a history of more than m periods and at least one observed lag-m pair (missing values
    # can leave none, e.g. a series observed only in its last few periods); lag 1 otherwise.
    seasonal = ((origins - starts + 1) > table.season_length) & np.isfinite(by_season)
    return np.where(seasonal, by_season, by_period), by_period


def mase_scale(table: NaiveErrorTable, series: np.ndarray, origins: np.ndarray, starts: np.ndarray | None = None) -> np.ndarray:
    """The MASE scale of each window's history: the one kernel behind training weights and evaluation.

    The standard definition (M4, utilsforecast's ``mase``, statsforecast's experiments): the
    mean absolute lag-``m`` difference of the history from ``starts`` (default: the series'
    first column) up to and including the origin when that history has more than ``m``
    periods and an observed lag-``m`` pair, the lag-1 difference otherwise. Pairs with a missing value are skipped; NaN
    when no pair is left. A zero scale stays zero (the caller decides what it means).
    """
    return _both_lags(table, series, origins, starts)[0]


def loss_scale(table: NaiveErrorTable, series: np.ndarray, origins: np.ndarray) -> np.ndarray:
    """:func:`mase_scale` for weighting the training loss, which needs a positive scale.

    Where the MASE scale is zero or undefined (a history that repeats exactly each season,
    missing pairs) the lag-1 scale stands in; NaN when neither is positive.
    """
    scale, period = _both_lags(table, series, origins, None)
    usable = np.isfinite(scale) & (scale > 0)
    fallback = np.isfinite(period) & (period > 0)
    return np.where(usable, scale, np.where(fallback, period, np.nan))
