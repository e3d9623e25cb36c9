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
    observed = np.isfinite(history)
    count = observed.sum(axis=1)
    safe = np.where(observed, history, 0.0)
    if scaler == "standard":
        loc = safe.sum(axis=1) / np.maximum(count, 1)
        centred = np.where(observed, history - loc[:, None], 0.0)
        scale = np.sqrt((centred**2).sum(axis=1) / np.maximum(count, 1))
    elif scaler == "robust":
        with np.errstate(all="ignore"):
            loc = np.nanmedian(np.where(observed, history, np.nan), axis=1)
            q75, q25 = np.nanpercentile(np.where(observed, history, np.nan), [75, 25], axis=1)
        loc = np.nan_to_num(loc)
        scale = np.nan_to_num((q75 - q25) / 1.349)
    elif scaler == "meanabs":
        loc = np.zeros(len(history))
        scale = np.abs(safe).sum(axis=1) / np.maximum(count, 1)
    else:
        raise ValueError(f"`scaler` must be one of {SCALERS}; got {scaler!r}.")
    magnitude = np.abs(loc)
    tiny = ~np.isfinite(scale) | (scale <= 1e-8 * np.maximum(magnitude, 1e-300))
    scale = np.where(tiny, np.where(magnitude > 0, magnitude, 1.0), scale)
    return loc, scale


LOSS_SCALES = ("window", "seasonal_naive")


@dataclass(frozen=True)
class NaiveErrorTable:
    """Running sums of the in-sample naive errors of every series, for O(1) lookups per window.

    ``sums[k, i, c]`` is the sum of ``|y_t - y_{t - lag_k}|`` over columns ``t < c`` of
    series ``i`` (both values observed), ``counts`` the number of such terms; lag 0 is the
    season length, lag 1 is one period (the fallback for histories shorter than a season).
    """

    sums: np.ndarray  # (2, N, W + 1)
    counts: np.ndarray  # (2, N, W + 1)


def naive_error_table(y: np.ndarray, season_length: int) -> NaiveErrorTable:
    """Precompute the running naive-error sums of a padded target array ``y`` (N, W)."""
    sums, counts = [], []
    for lag in (max(season_length, 1), 1):
        diff = np.full(y.shape, np.nan)
        if lag < y.shape[1]:
            diff[:, lag:] = np.abs(y[:, lag:] - y[:, :-lag])
        seen = np.isfinite(diff)
        zero = np.zeros((len(y), 1))
        sums.append(np.concatenate([zero, np.where(seen, diff, 0.0).cumsum(axis=1)], axis=1))
        counts.append(np.concatenate([zero, seen.cumsum(axis=1)], axis=1))
    return NaiveErrorTable(np.stack(sums), np.stack(counts))


def naive_scale(table: NaiveErrorTable, series: np.ndarray, origins: np.ndarray) -> np.ndarray:
    """Mean absolute seasonal-naive error of each series' history up to and including its origin.

    This is the MASE denominator computed on the data available at the origin (lag 1 when
    the history holds no complete season); NaN when it is zero or undefined.
    """
    sums = table.sums[:, series, origins + 1]
    counts = table.counts[:, series, origins + 1]
    with np.errstate(all="ignore"):
        mean = sums / counts
    usable = np.isfinite(mean) & (mean > 0)
    return np.where(usable[0], mean[0], np.where(usable[1], mean[1], np.nan))
