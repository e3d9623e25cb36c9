"""Damped Holt-Winters fitted on all series at once: the recursion, the choices it makes, and its accuracy."""

import warnings

import numpy as np
import pandas as pd
import pytest
from statsforecast import StatsForecast
from statsforecast.models import AutoETS

from forecaster.partners import holt_winters
from forecaster.partners.holt_winters import holt_winters_forecasts, parameter_grid


def _one(y: np.ndarray, horizon: int, season_length: int) -> np.ndarray:
    return holt_winters_forecasts(y[None, :], np.array([len(y)]), horizon, season_length)[0]


def _seasonal(n: int, seed: int, level: float = 50.0, slope: float = 0.3, noise: float = 1.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    return level + slope * t + 8 * np.sin(2 * np.pi * t / 12) + rng.normal(0, noise, n)


def _reference(y: np.ndarray, horizon: int, m: int) -> np.ndarray:
    """The documented model for one series, written as plain loops over candidates, grid points and periods."""
    candidates = [_reference_fits(y.astype(float), horizon, m)]
    if (y > 0).all():
        log_fits = _reference_fits(np.log(y), horizon, m)
        candidates.append([(aic + 2 * np.log(y).sum(), np.exp(path)) for aic, path in log_fits])
    fits = [fit for scale in candidates for fit in scale]
    return min(fits, key=lambda fit: fit[0])[1]  # the first on ties: original scale, then no trend


def _reference_fits(z: np.ndarray, horizon: int, m: int) -> list[tuple[float, np.ndarray]]:
    """(AIC, forecast path) of the no-trend and the damped-trend candidate on the scale of ``z``."""
    n = len(z)
    seasonal = m >= 2 and n >= 2 * m
    if seasonal:
        first, second = z[:m].mean(), z[m : 2 * m].mean()
        slope0 = (second - first) / m
        deviation = z[: 2 * m] - (first + slope0 * (np.arange(2 * m) - (m - 1) / 2))
        season0 = 0.5 * (deviation[:m] + deviation[m:])
        season0 = season0 - season0.mean()
        start, mean0 = first - slope0 * (m - 1) / 2, first
    else:
        m = max(m, 1)
        k = min(n, holt_winters.INITIAL_PERIODS)
        slope0, intercept = np.polyfit(np.arange(k), z[:k], 1)
        start, mean0, season0 = intercept, z[:k].mean(), np.zeros(m)
    fits = []
    for trend in (False, True):
        best = None
        for alpha, beta, gamma, phi in zip(*parameter_grid(trend), strict=True):
            gamma = gamma if seasonal else 0.0
            level, slope = (start - slope0, slope0) if trend else (mean0, 0.0)
            season = list(season0)
            sse = 0.0
            for t in range(n):
                predicted = level + phi * slope
                error = z[t] - predicted - season[t % m]
                sse += error * error
                level, slope = predicted + alpha * error, phi * slope + beta * error
                season[t % m] += gamma * error
            if best is None or sse < best[0]:
                steps = np.arange(1, horizon + 1)
                path = level + np.cumsum(phi**steps) * slope + np.array([season[(n + j) % m] for j in range(horizon)])
                best = (sse, path)
        parameters = (5 if trend else 2) + (m if seasonal else 0)
        fits.append((n * np.log(max(best[0], np.finfo(float).tiny) / n) + 2 * parameters, best[1]))
    return fits


@pytest.mark.parametrize(
    "y, m",
    [
        (_seasonal(40, 0), 12),  # positive: both scales compete
        (_seasonal(40, 1, level=-5.0), 12),  # crosses zero: the original scale only
        (_seasonal(17, 2), 12),  # under two seasons: no seasonal states
        (_seasonal(30, 3, slope=0.0), 4),
        (_seasonal(25, 4, slope=2.0), 1),
    ],
)
def test_matches_the_plain_loop_reference(y, m):
    np.testing.assert_allclose(_one(y, 7, m), _reference(y, 7, m), rtol=1e-9)


def test_series_of_different_lengths_are_fitted_as_if_alone_in_any_block_size(monkeypatch):
    series = [_seasonal(n, seed) for seed, n in enumerate((60, 23, 41, 36))]
    series[1] = series[1] - 60  # one on the original scale
    lengths = np.array([len(s) for s in series])
    stacked = np.zeros((len(series), lengths.max()))
    for row, s in enumerate(series):
        stacked[row, : len(s)] = s
    together = holt_winters_forecasts(stacked, lengths, 9, 12)
    for row, s in enumerate(series):
        np.testing.assert_allclose(together[row], _one(s, 9, 12), rtol=1e-12)
    monkeypatch.setattr(holt_winters, "BLOCK_BYTES", 1)  # one series per block
    np.testing.assert_array_equal(holt_winters_forecasts(stacked, lengths, 9, 12), together)


def test_positive_series_scale_and_other_series_shift_with_the_data():
    positive = _seasonal(48, 5)
    np.testing.assert_allclose(_one(1000.0 * positive, 6, 12), 1000.0 * _one(positive, 6, 12), rtol=1e-9)
    crossing = _seasonal(48, 6, level=-20.0)
    np.testing.assert_allclose(_one(crossing + 7.0, 6, 12), _one(crossing, 6, 12) + 7.0, rtol=1e-9)


def test_aic_keeps_a_trend_where_there_is_one_and_drops_it_where_there_is_none():
    t = np.arange(60)
    trending = -10 + 1.5 * t + 8 * np.sin(2 * np.pi * t / 12) + np.random.default_rng(7).normal(0, 0.5, 60)
    forecast = _one(trending, 12, 12)
    assert forecast.mean() - trending[-12:].mean() > 12  # a year of trend, damped, is about 18
    flat = _seasonal(60, 8, level=-3.0, slope=0.0, noise=2.0)
    z = flat[None, :]
    season, start, slope, mean = holt_winters._initial_states(z, np.array([60]), 12, np.array([True]))
    no_trend = holt_winters._fit(z, np.array([60]), 12, 12, np.array([True]), season, mean, 0 * slope, parameter_grid(False))
    np.testing.assert_allclose(_one(flat, 12, 12), no_trend.forecast[0], rtol=1e-12)


def test_as_accurate_as_statsforecast_autoets_on_simulated_seasonal_series():
    """Holt-Winters data with noise: out-of-sample MAE within 10% of AutoETS's (this grid versus its optimiser)."""
    rng = np.random.default_rng(0)
    n_series, length, horizon = 40, 72, 12
    t = np.arange(length + horizon)
    level = rng.uniform(50, 150, (n_series, 1))
    amplitude = rng.uniform(5, 20, (n_series, 1))
    y = level + rng.uniform(-0.3, 0.6, (n_series, 1)) * t + amplitude * np.sin(2 * np.pi * t / 12)
    y = y + rng.normal(0, 1, (n_series, length + horizon)).cumsum(axis=1) * 0.8
    history, future = y[:, :length], y[:, length:]
    ours = holt_winters_forecasts(history, np.full(n_series, length), horizon, 12)
    frame = pd.DataFrame(
        {
            "unique_id": np.repeat(np.arange(n_series), length),
            "ds": np.tile(pd.date_range("2000-01-01", periods=length, freq="MS"), n_series),
            "y": history.ravel(),
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = StatsForecast(models=[AutoETS(season_length=12)], freq="MS").forecast(df=frame, h=horizon)
    reference = reference["AutoETS"].to_numpy().reshape(n_series, horizon)
    ours_mae, reference_mae = np.abs(ours - future).mean(), np.abs(reference - future).mean()
    assert ours_mae < 1.1 * reference_mae, (ours_mae, reference_mae)


@pytest.mark.parametrize("value", [0.0, 5.0, -2.0])
def test_a_constant_series_forecasts_its_constant(value):
    np.testing.assert_allclose(_one(np.full(30, value), 5, 12), value, atol=1e-12)


def test_the_interval_of_a_local_level_covers_its_nominal_share_of_simulated_futures():
    """The h-step spread follows the model's error variance: 80% intervals hold about 80% of futures, at every step.

    Without the horizon growth (one-step sigma at every step) the last steps cover far less; with a
    spread that ignores the series' own noise, the two noise groups would split far from 80%.
    """
    rng = np.random.default_rng(3)
    n, length, horizon, alpha = 4000, 80, 8, 0.5
    noise = np.where(np.arange(n) < n // 2, 1.0, 5.0)[:, None]  # two groups of series, one five times noisier
    errors = rng.normal(size=(n, length + horizon)) * noise
    level = 1000.0 + np.cumsum(np.concatenate([errors[:, :1], alpha * errors[:, :-1]], axis=1), axis=1)
    y = level + errors  # y_t = l_(t-1) + e_t, l_t = l_(t-1) + alpha * e_t
    history, future = y[:, :length], y[:, length:]
    fit = holt_winters.holt_winters_distribution(history, np.full(n, length), horizon, 1)
    offsets = fit.offsets([0.1, 0.9])
    inside = (future >= fit.center + offsets[:, :, 0]) & (future <= fit.center + offsets[:, :, 1])
    coverage = inside.mean(axis=0)
    assert np.all(np.abs(coverage - 0.8) < 0.04), coverage
    for group in (slice(0, n // 2), slice(n // 2, n)):
        assert abs(inside[group].mean() - 0.8) < 0.04
    # The spread grows as sqrt(1 + (h - 1) alpha^2) for a local level: steps 8 and 1 differ by about that ratio.
    ratio = np.median(fit.spread[:, -1] / fit.spread[:, 0])
    assert ratio == pytest.approx(np.sqrt(1 + 7 * alpha**2), rel=0.15)


def test_the_distribution_centre_is_the_forecast_and_rows_keep_their_order():
    stacked = np.stack([_seasonal(60, seed) for seed in range(5)])
    lengths = np.array([60, 41, 55, 30, 60])
    fit = holt_winters.holt_winters_distribution(stacked, lengths, 9, 12)
    np.testing.assert_array_equal(fit.center, holt_winters_forecasts(stacked, lengths, 9, 12))
    for row in range(5):
        alone = holt_winters.holt_winters_distribution(stacked[row : row + 1, : lengths[row]], lengths[row : row + 1], 9, 12)
        np.testing.assert_allclose(alone.spread[0], fit.spread[row], rtol=1e-12)
        assert alone.log[0] == fit.log[row]
    assert (np.diff(fit.spread, axis=1) >= 0).all()  # an error's variance never shrinks with the horizon


def _impulse_coefficients(alpha: float, beta: float, gamma: float, phi: float, m: int, horizon: int) -> np.ndarray:
    """c_j, j = 1 .. horizon - 1: how much a one-step error moves the prediction j periods later, by running the recursion."""
    level, slope, season = 0.0, 0.0, [0.0] * m
    moved = []
    for t in range(horizon):
        error = 1.0 if t == 0 else 0.0  # one unit error at the first period, none after
        prediction = level + phi * slope + season[t % m]
        if t > 0:
            moved.append(prediction)  # prediction of period t, moved by the error at period 0
        level, slope = level + phi * slope + alpha * error, phi * slope + beta * error
        season[t % m] += gamma * error
    return np.array(moved)


@pytest.mark.parametrize("point", [0, 7, 40, -1])
def test_the_error_spread_is_the_recursion_s_impulse_response(point):
    """sigma * sqrt(1 + sum c_j^2), each c_j read off the smoothing recursion itself (trend, damping and season all count)."""
    grid = holt_winters.DAMPED_GRID
    seasonal_points = np.flatnonzero((grid.gamma > 0) & (grid.beta > 0))
    index = seasonal_points[point]
    m, horizon = 4, 11
    spread = holt_winters._error_spread(grid, np.array([index]), np.array([9.0]), np.array([4]), np.array([True]), horizon, m)
    c = _impulse_coefficients(grid.alpha[index], grid.beta[index], grid.gamma[index], grid.phi[index], m, horizon)
    expected = 1.5 * np.sqrt(1.0 + np.concatenate([[0.0], np.cumsum(c**2)]))  # sigma^2 = 9 / 4 degrees of freedom
    np.testing.assert_allclose(spread[0], expected, rtol=1e-12)


def test_a_short_history_s_spread_counts_the_fitted_states():
    """Two seasons of history: the starting pattern is read off every observation, so sigma divides by what is left."""
    rng = np.random.default_rng(5)
    n, m, horizon = 3000, 12, 6
    t = np.arange(2 * m + horizon)
    y = 100.0 + 10 * np.sin(2 * np.pi * t / m)[None, :] + rng.normal(size=(n, len(t))) * 2.0
    fit = holt_winters.holt_winters_distribution(y[:, : 2 * m], np.full(n, 2 * m), horizon, m)
    offsets = fit.offsets([0.1, 0.9])
    future = y[:, 2 * m :]
    inside = (future >= fit.center + offsets[:, :, 0]) & (future <= fit.center + offsets[:, :, 1])
    assert inside.mean() > 0.7  # sse / n gave about 0.5 here
