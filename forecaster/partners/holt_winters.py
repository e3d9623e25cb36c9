"""Damped Holt-Winters exponential smoothing, fitted on every series of a panel at once.

The second statistical partner of the blend (``blend.py``), beside the Theta method:
where Theta keeps the seasonal pattern of a classical decomposition fixed, this model
lets level, trend and seasonal pattern all evolve, as the exponential smoothing models
of statsforecast's ``AutoETS`` do. Per series, with additive errors on the series' scale:

    prediction  p_t = l_(t-1) + phi * b_(t-1) + s_(t-m)
    level       l_t = l_(t-1) + phi * b_(t-1) + alpha * e_t,    e_t = y_t - p_t
    trend       b_t = phi * b_(t-1) + beta * e_t
    season      s_t = s_(t-m) + gamma * e_t

Up to four candidates per series, as AutoETS chooses among its models: a damped trend or
no trend (``b = 0``), each on ``y`` and, for series positive throughout, on ``log(y)`` (a
multiplicative trend and season in effect). The smoothing parameters of each candidate are
the point of a fixed grid with the lowest in-sample sum of squared one-step errors; the
candidate with the lowest AIC wins, the log candidates' AIC taken in terms of ``y`` (their
likelihood gains the Jacobian of the log, ``2 * sum(log y)``), so the scales compare.
Initial states are set by a heuristic in the spirit of Hyndman et al. (2008, sec. 2.6.1):
from the first two seasons (their means give level and slope, the detrended deviations
the seasonal pattern), or, for series without two full seasons, from a least-squares line
through the first ``INITIAL_PERIODS`` observations. statsforecast optimises parameters
and initial states per series with Nelder-Mead (about 60 ms per M3 series); the grid
runs every series and every grid point as one array operation per period.

Series are passed left-aligned: row ``s`` holds its ``lengths[s]`` observations in
columns ``0 .. lengths[s] - 1``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .distribution import PartnerDistribution

ALPHAS = (0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9)
BETAS = (0.0, 0.005, 0.02, 0.05, 0.1)
GAMMAS = (0.0, 0.01, 0.05, 0.1, 0.2)
PHIS = (0.8, 0.9, 0.95, 0.98)
# Observations the least-squares line of a series without two full seasons is fitted to.
INITIAL_PERIODS = 10
# Bytes of the (season x series x grid) state array per block of series: small enough to stay
# mostly in cache (16 MB ran 1.4x faster than 64 MB and 1.8x faster than 1 MB on 20,000 series).
BLOCK_BYTES = 16 * 2**20


class Grid(NamedTuple):
    """Candidate smoothing parameters, one entry per grid point."""

    alpha: np.ndarray
    beta: np.ndarray
    gamma: np.ndarray
    phi: np.ndarray


class Fit(NamedTuple):
    """Forecasts (N, H) of one candidate on the modelled scale, their error's standard deviation (N, H), and the AIC (N,)."""

    forecast: np.ndarray
    spread: np.ndarray
    aic: np.ndarray


def parameter_grid(trend: bool) -> Grid:
    """Grid points with ``beta <= alpha`` and ``gamma <= 1 - alpha`` (the usual admissible region)."""
    points = [
        (alpha, beta, gamma, phi)
        for alpha in ALPHAS
        for beta in (BETAS if trend else (0.0,))
        for gamma in GAMMAS
        for phi in (PHIS if trend else (1.0,))
        if beta <= alpha and gamma <= 1.0 - alpha
    ]
    return Grid(*(np.array(column) for column in zip(*points, strict=True)))


DAMPED_GRID, FLAT_GRID = parameter_grid(True), parameter_grid(False)


def holt_winters_forecasts(y: np.ndarray, lengths: np.ndarray, horizon: int, season_length: int) -> np.ndarray:
    """Forecasts (N, horizon) of damped Holt-Winters for the left-aligned series ``y`` (N, T).

    Every series needs at least 2 observations and no missing value among them; values
    past ``lengths`` are ignored.
    """
    return holt_winters_distribution(y, lengths, horizon, season_length).center


def holt_winters_distribution(y: np.ndarray, lengths: np.ndarray, horizon: int, season_length: int) -> PartnerDistribution:
    """Forecast distributions of damped Holt-Winters for the left-aligned series ``y`` (N, T).

    The centre is the forecast of ``holt_winters_forecasts``; the spread is the standard
    deviation of the chosen candidate's h-step error, ``sigma * sqrt(1 + sum_{j<h} c_j^2)`` with
    ``c_j = alpha + beta * (phi + ... + phi^j) + gamma * [j % m == 0]`` and ``sigma^2`` the sum of its
    squared one-step errors over the observations left after its fitted parameters and initial states
    (Hyndman et al., 2008, table 6.1, class 1), on the scale the candidate modelled. Series are
    fitted in blocks that bound the state array to ``BLOCK_BYTES``.
    """
    y = np.asarray(y, dtype=float)
    lengths = np.asarray(lengths, dtype=int)
    per_block = max(1, BLOCK_BYTES // (8 * max(season_length, 1) * len(DAMPED_GRID.alpha)))
    parts = [
        _forecast_block(y[i : i + per_block], lengths[i : i + per_block], horizon, season_length)
        for i in range(0, len(y), per_block)
    ]
    if not parts:
        return PartnerDistribution(np.empty((0, horizon)), np.empty((0, horizon)), np.zeros(0, dtype=bool))
    return PartnerDistribution(*(np.concatenate(column) for column in zip(*parts, strict=True)))


def _forecast_block(y: np.ndarray, lengths: np.ndarray, horizon: int, m: int) -> PartnerDistribution:
    order = np.argsort(-lengths, kind="stable")
    y, lengths = y[order], lengths[order]
    inside = np.arange(y.shape[1])[None, :] < lengths[:, None]
    y = np.where(inside, y, 0.0)
    positive = np.where(inside, y > 0, True).all(axis=1)
    seasonal = (m >= 2) & (lengths >= 2 * m)
    period = m if m >= 2 else 1
    best_aic = np.full(len(y), np.inf)
    best = np.full((len(y), horizon), np.nan)  # stays NaN where no candidate has a finite AIC
    best_spread = np.full((len(y), horizon), np.nan)
    best_log = np.zeros(len(y), dtype=bool)
    # Candidates from the simplest: on ties the original scale and no trend win.
    for use_log in (False, True):
        if use_log and not positive.any():
            continue
        z = np.log(np.where(inside & positive[:, None], y, 1.0)) if use_log else y  # 0 outside the positive series
        # AIC of the log model in terms of y: the Jacobian adds 2 * sum(log y).
        jacobian = 2.0 * z.sum(axis=1) if use_log else 0.0
        season0, start, slope0, mean0 = _initial_states(z, lengths, period, seasonal)
        for fit in (
            _fit(z, lengths, horizon, period, seasonal, season0, mean0, np.zeros_like(slope0), FLAT_GRID),
            _fit(z, lengths, horizon, period, seasonal, season0, start - slope0, slope0, DAMPED_GRID),
        ):
            aic = np.where(positive, fit.aic + jacobian, np.inf) if use_log else fit.aic
            with np.errstate(over="ignore"):
                forecast = np.exp(fit.forecast) if use_log else fit.forecast
            better = aic < best_aic
            best_aic = np.where(better, aic, best_aic)
            best = np.where(better[:, None], forecast, best)
            best_spread = np.where(better[:, None], fit.spread, best_spread)
            best_log = np.where(better, use_log, best_log)
    restore = np.argsort(order, kind="stable")
    return PartnerDistribution(best[restore], best_spread[restore], best_log[restore])


def _initial_states(z: np.ndarray, lengths: np.ndarray, m: int, seasonal: np.ndarray) -> tuple[np.ndarray, ...]:
    """Seasonal pattern (N, m) by phase ``t % m``; the initial line's value at period 0 and its slope; the initial mean.

    Seasonal series: the means of the first two seasons give the slope; deviations of the
    first two seasons from that line, averaged per phase and centred, give the pattern; the
    first season's mean is the initial mean. Other series: a least-squares line through,
    and the mean of, the first ``INITIAL_PERIODS`` observations.
    """
    n, width = z.shape
    season = np.zeros((n, m))
    level, slope, mean = _first_line(z, lengths)
    if seasonal.any() and width >= 2 * m:
        first, second = z[:, :m].mean(axis=1), z[:, m : 2 * m].mean(axis=1)
        seasonal_slope = (second - first) / m
        line = first[:, None] + seasonal_slope[:, None] * (np.arange(2 * m)[None, :] - (m - 1) / 2)
        deviation = z[:, : 2 * m] - line
        pattern = 0.5 * (deviation[:, :m] + deviation[:, m:])
        pattern -= pattern.mean(axis=1, keepdims=True)
        season = np.where(seasonal[:, None], pattern, 0.0)
        level = np.where(seasonal, first - seasonal_slope * (m - 1) / 2, level)
        slope = np.where(seasonal, seasonal_slope, slope)
        mean = np.where(seasonal, first, mean)
    return season, level, slope, mean


def _first_line(z: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Value at period 0 and slope of a least-squares line through each series' first observations, and their mean."""
    count = np.minimum(lengths, INITIAL_PERIODS)
    t = np.arange(min(z.shape[1], INITIAL_PERIODS))[None, :]
    used = t < count[:, None]
    t_mean = np.where(used, t, 0).sum(axis=1) / count
    z_mean = np.where(used, z[:, : t.shape[1]], 0.0).sum(axis=1) / count
    dt = np.where(used, t - t_mean[:, None], 0.0)
    variance = (dt * dt).sum(axis=1)
    slope = np.where(variance > 0, (dt * (z[:, : t.shape[1]] - z_mean[:, None])).sum(axis=1) / np.maximum(variance, 1e-300), 0.0)
    return z_mean - slope * t_mean, slope, z_mean


def _fit(
    z: np.ndarray,
    lengths: np.ndarray,
    horizon: int,
    m: int,
    seasonal: np.ndarray,
    season0: np.ndarray,
    level0: np.ndarray,
    slope0: np.ndarray,
    grid: Grid,
) -> Fit:
    """Run the recursion for every series and grid point; forecast with each series' best point.

    Rows must be sorted by decreasing length.
    """
    n, width = z.shape
    points = len(grid.alpha)
    alpha, beta, phi = grid.alpha[None, :], grid.beta[None, :], grid.phi[None, :]
    gamma = np.where(seasonal[:, None], grid.gamma[None, :], 0.0)
    level = np.repeat(level0[:, None], points, axis=1)  # the level one period before the first observation
    slope = np.repeat(slope0[:, None], points, axis=1)
    season = np.repeat(season0.T[:, :, None], points, axis=2)  # (m, n, points)
    sse = np.zeros((n, points))
    # Rows come longest first, so the series still running at a period are a leading block of
    # rows: each period updates that block in place and the others keep their final states.
    running = np.searchsorted(-lengths, -np.arange(width), side="left")
    # The smoothing recursion runs over time; each period is one array operation over series x grid.
    for column, k in enumerate(running):
        phase = column % m
        predicted = phi * slope[:k]
        predicted += level[:k]
        error = z[:k, column : column + 1] - predicted
        error -= season[phase, :k]
        sse[:k] += error * error
        np.multiply(alpha, error, out=level[:k])
        level[:k] += predicted
        slope[:k] *= phi
        slope[:k] += beta * error
        season[phase, :k] += gamma[:k] * error
    rows = np.arange(n)
    best = sse.argmin(axis=1)
    damping = np.cumsum(grid.phi[best][:, None] ** np.arange(1, horizon + 1)[None, :], axis=1)
    phases = (lengths[:, None] + np.arange(horizon)[None, :]) % m
    future_season = np.take_along_axis(season[:, rows, best].T, phases, axis=1)
    forecast = level[rows, best][:, None] + damping * slope[rows, best][:, None] + future_season
    # alpha and the level (+ beta, phi and the slope with a trend; + gamma and m - 1 free seasonal states)
    parameters = (5 if grid.beta.any() else 2) + np.where(seasonal, m, 0)
    smallest = np.finfo(float).tiny * lengths
    aic = lengths * np.log(np.maximum(sse[rows, best], smallest) / lengths) + 2 * parameters
    spread = _error_spread(grid, best, sse[rows, best], lengths - parameters, seasonal, horizon, m)
    return Fit(forecast, spread, aic)


def _error_spread(
    grid: Grid, best: np.ndarray, sse: np.ndarray, freedom: np.ndarray, seasonal: np.ndarray, horizon: int, m: int
) -> np.ndarray:
    """(N, H) standard deviation of each h-step error of the chosen grid points (Hyndman et al., 2008, table 6.1).

    ``freedom`` is each series' observations less the parameters and initial states fitted to
    them: ``sigma^2 = sse / freedom`` (at least 1), as R's ``ets`` estimates it. Over all
    observations instead, a history of two seasons (its starting pattern read off every one of
    them) gave 80% intervals that held half of the futures.
    """
    alpha, beta, phi = grid.alpha[best][:, None], grid.beta[best][:, None], grid.phi[best][:, None]
    gamma = np.where(seasonal, grid.gamma[best], 0.0)[:, None]
    ahead = np.arange(1, horizon)[None, :]  # j = 1 .. H - 1
    damped = np.cumsum(phi**ahead, axis=1)  # phi + ... + phi^j
    c = alpha + beta * damped + gamma * (ahead % m == 0)
    growth = 1.0 + np.concatenate([np.zeros((len(best), 1)), np.cumsum(c * c, axis=1)], axis=1)
    sigma = np.sqrt(sse / np.maximum(freedom, 1))
    return sigma[:, None] * np.sqrt(growth)
