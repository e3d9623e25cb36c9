"""The standard Theta method, fitted on every series of a panel at once.

The same model as statsforecast's ``Theta`` (Fiorucci et al. 2016's standard theta
model, STM): a seasonality test at the 90% level, a classical (multiplicative, else
additive) decomposition when it passes, and on the seasonally adjusted series simple
exponential smoothing plus half the slope of a linear trend, with the smoothing weight
and the initial level chosen to minimise the one-step squared errors from the fourth
period on. statsforecast fits each series on its own with Nelder-Mead, a few
milliseconds per series; here all series are fitted together with array operations:
for a given weight the best initial level has a closed form (the errors are linear in
it), so only the weight is searched, on a grid refined twice around each series' best.

Series are passed left-aligned: row ``s`` holds its ``lengths[s]`` observations in
columns ``0 .. lengths[s] - 1``, so a column is the same time index for every series.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.stats import norm

from ..data.decomposition import centred_moving_average

ALPHA_BOUNDS = (0.1, 0.99)
# Initial-level bound of statsforecast's optimiser.
LEVEL_BOUND = 1e10
# Errors of the first three periods do not count towards the fit (as in statsforecast).
BURN_IN = 3
SEASONALITY_CRITICAL = float(norm.ppf(0.95))
# Seasonal indices below this make the multiplicative decomposition fall back to additive.
SMALLEST_MULTIPLICATIVE_INDEX = 0.01
# Series fitted together: bounds the (series x candidate weights) work arrays to a few MB each.
SERIES_PER_BLOCK = 8192


def standard_theta_forecasts(y: np.ndarray, lengths: np.ndarray, horizon: int, season_length: int) -> np.ndarray:
    """Forecasts (N, horizon) of the standard Theta method for the left-aligned series ``y`` (N, T).

    Every series needs at least 4 observations and no missing value among them; values
    past ``lengths`` are ignored. Series are fitted in blocks of ``SERIES_PER_BLOCK`` to
    bound memory on large panels.
    """
    y = np.asarray(y, dtype=float)
    lengths = np.asarray(lengths, dtype=int)
    blocks = range(0, len(y), SERIES_PER_BLOCK)
    parts = [
        _forecast_block(y[i : i + SERIES_PER_BLOCK], lengths[i : i + SERIES_PER_BLOCK], horizon, season_length) for i in blocks
    ]
    return np.concatenate(parts) if parts else np.empty((0, horizon))


def _forecast_block(y: np.ndarray, lengths: np.ndarray, horizon: int, season_length: int) -> np.ndarray:
    inside = np.arange(y.shape[1])[None, :] < lengths[:, None]
    y = np.where(inside, y, 0.0)
    indices, kind = _seasonal_indices(y, lengths, inside, season_length)
    adjusted = _deseasonalise(y, indices, kind, season_length)
    forecast = _stm_forecasts(np.where(inside, adjusted, 0.0), lengths, horizon)
    if indices is None:
        return forecast
    phase = (lengths[:, None] + np.arange(horizon)[None, :]) % season_length
    future_index = np.take_along_axis(indices, phase, axis=1)
    kind = kind[:, None]
    return np.where(kind == 1, forecast * future_index, np.where(kind == 2, forecast + future_index, forecast))


def _seasonal_indices(y: np.ndarray, lengths: np.ndarray, inside: np.ndarray, m: int) -> tuple[np.ndarray | None, np.ndarray]:
    """Seasonal indices (N, m) by phase ``t % m`` and the decomposition kind per series.

    Kind 0: no decomposition, 1: multiplicative, 2: additive. The test: the lag-``m``
    autocorrelation exceeds 1.645 standard errors (Bartlett), for ``m >= 4`` and at least
    two full seasons.
    """
    kind = np.zeros(len(y), dtype=int)
    if m < 4:
        return None, kind
    seasonal = (lengths >= 2 * m) & _seasonality_detected(y, lengths, inside, m)
    if not seasonal.any():
        return None, kind
    trend, _ = centred_moving_average(np.where(inside, y, np.nan), m)
    has_trend = np.isfinite(trend)
    trend = np.where(has_trend, trend, 0.0)
    positive = np.where(inside, y, np.inf).min(axis=1) > 0
    multiplicative = _phase_means(np.divide(y, trend, out=np.zeros_like(y), where=has_trend), has_trend, m)
    with np.errstate(invalid="ignore", divide="ignore"):  # rows without a trend are not seasonal
        multiplicative = multiplicative / multiplicative.mean(axis=1, keepdims=True)
    additive = _phase_means(y - trend, has_trend, m)
    additive = additive - additive.mean(axis=1, keepdims=True)
    use_multiplicative = positive & (multiplicative >= SMALLEST_MULTIPLICATIVE_INDEX).all(axis=1)
    kind = np.where(seasonal, np.where(use_multiplicative, 1, 2), 0)
    indices = np.where(use_multiplicative[:, None], multiplicative, additive)
    return indices, kind


def _seasonality_detected(y: np.ndarray, lengths: np.ndarray, inside: np.ndarray, m: int) -> np.ndarray:
    centred = np.where(inside, y - y.sum(axis=1, keepdims=True) / lengths[:, None], 0.0)
    variance = (centred**2).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        acf = np.stack([(centred[:, :-lag] * centred[:, lag:]).sum(axis=1) for lag in range(1, m + 1)], axis=1)
        acf = acf / variance[:, None]
        stat = np.sqrt((1 + 2 * (acf[:, :-1] ** 2).sum(axis=1)) / lengths)
        return np.abs(acf[:, -1]) / stat > SEASONALITY_CRITICAL


def _phase_means(values: np.ndarray, valid: np.ndarray, m: int) -> np.ndarray:
    """Mean of ``values`` over the valid columns of each phase ``column % m``: (N, m)."""
    n, width = values.shape
    padded = -width % m
    values = np.pad(np.where(valid, values, 0.0), ((0, 0), (0, padded))).reshape(n, -1, m)
    counts = np.pad(valid, ((0, 0), (0, padded))).reshape(n, -1, m).sum(axis=1)
    return values.sum(axis=1) / np.maximum(counts, 1)


def _deseasonalise(y: np.ndarray, indices: np.ndarray | None, kind: np.ndarray, m: int) -> np.ndarray:
    if indices is None:
        return y
    by_column = indices[:, np.arange(y.shape[1]) % m]
    divided = np.divide(y, by_column, out=y.copy(), where=kind[:, None] == 1)
    return np.where(kind[:, None] == 2, y - by_column, divided)


def _stm_forecasts(y: np.ndarray, lengths: np.ndarray, horizon: int) -> np.ndarray:
    """Standard theta model (theta = 2) forecasts of the left-aligned, seasonally adjusted ``y``."""
    intercept, slope = _linear_trend(y, lengths)
    alpha, fit = _best_fit(y, lengths, intercept, slope)
    q = 1 - alpha
    level = q**lengths * fit.initial_level + fit.last_smoothed
    steps = lengths[:, None] + np.arange(horizon)[None, :]
    drift = 0.5 * (intercept[:, None] * q[:, None] ** steps + slope[:, None] * (1 - q[:, None] ** (steps + 1)) / alpha[:, None])
    # The level is smoothed towards each forecast in turn, so it moves by alpha * drift per step.
    earlier_drift = np.concatenate([np.zeros((len(y), 1)), np.cumsum(drift[:, :-1], axis=1)], axis=1)
    return level[:, None] + alpha[:, None] * earlier_drift + drift


def _linear_trend(y: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares intercept and slope of ``y`` on t = 1 .. n."""
    n = lengths.astype(float)
    t = np.arange(1, y.shape[1] + 1)[None, :]
    mean = y.sum(axis=1) / n
    weighted = (y * t).sum(axis=1) / n
    slope = 6 * (2 * weighted - (n + 1) * mean) / (n * n - 1)
    return mean - (n + 1) * slope / 2, slope


class _StmPass(NamedTuple):
    """One smoothing pass for candidate weights (N, K): squared one-step error, best initial level, last smoothed value."""

    sse: np.ndarray
    initial_level: np.ndarray
    last_smoothed: np.ndarray


def _stm_pass(y: np.ndarray, lengths: np.ndarray, intercept: np.ndarray, slope: np.ndarray, alpha: np.ndarray) -> _StmPass:
    """One-step errors of the STM for every candidate ``alpha`` (N, K), with the best initial level.

    The level before period ``i`` is ``q**i * l0 + smoothed[i - 1]`` (``q = 1 - alpha``,
    ``smoothed`` the exponential smoothing started from zero), so the error at ``i`` is
    ``r_i - q**i * l0`` and the squared-error-minimising ``l0`` is a ratio of two sums.
    """
    q = 1 - alpha
    a, b = intercept[:, None], slope[:, None]
    smoothed = alpha * y[:, :1]
    power = np.ones_like(alpha)
    sum_rr = np.zeros_like(alpha)
    sum_rg = np.zeros_like(alpha)
    sum_gg = np.zeros_like(alpha)
    last_smoothed = np.where(lengths[:, None] == 1, smoothed, 0.0)
    for i in range(1, y.shape[1]):  # the smoothing recursion runs over time, vectorised over series and weights
        power = power * q
        scored = ((i >= BURN_IN) & (i < lengths))[:, None]
        residual = y[:, i : i + 1] - smoothed - 0.5 * (a * power + b * (1 - power * q) / alpha)
        sum_rr += np.where(scored, residual * residual, 0.0)
        sum_rg += np.where(scored, residual * power, 0.0)
        sum_gg += np.where(scored, power * power, 0.0)
        smoothed = alpha * y[:, i : i + 1] + q * smoothed
        last_smoothed = np.where((i == lengths - 1)[:, None], smoothed, last_smoothed)
    level = np.clip(np.divide(sum_rg, sum_gg, out=np.zeros_like(sum_rg), where=sum_gg > 0), -LEVEL_BOUND, LEVEL_BOUND)
    sse = sum_rr - 2 * level * sum_rg + level * level * sum_gg
    return _StmPass(sse, level, last_smoothed)


def _best_fit(y: np.ndarray, lengths: np.ndarray, intercept: np.ndarray, slope: np.ndarray) -> tuple[np.ndarray, _StmPass]:
    """The smoothing weight in ``ALPHA_BOUNDS`` with the least squared one-step error, to 0.001, and its pass (N,).

    A grid of step 0.05, then grids of step 0.01 and 0.001 spanning one step of the
    previous grid on either side of each series' best weight so far; the last grid's
    pass already holds the best weight's initial level and last smoothed value.
    """
    low, high = ALPHA_BOUNDS
    coarse = np.append(np.arange(low, high, 0.05), high)
    best, fit = _least_error(y, lengths, intercept, slope, np.broadcast_to(coarse, (len(y), len(coarse))))
    for step in (0.01, 0.001):
        candidates = np.clip(best[:, None] + np.arange(-9, 10)[None, :] * step, low, high)
        best, fit = _least_error(y, lengths, intercept, slope, candidates)
    return best, fit


def _least_error(
    y: np.ndarray, lengths: np.ndarray, intercept: np.ndarray, slope: np.ndarray, candidates: np.ndarray
) -> tuple[np.ndarray, _StmPass]:
    """The candidate weight (N, K) with the least squared one-step error per series, and its pass (N,)."""
    fit = _stm_pass(y, lengths, intercept, slope, candidates)
    choice = np.argmin(np.where(np.isfinite(fit.sse), fit.sse, np.inf), axis=1)[:, None]
    return np.take_along_axis(candidates, choice, axis=1)[:, 0], _StmPass(
        *(np.take_along_axis(part, choice, axis=1)[:, 0] for part in fit)
    )
