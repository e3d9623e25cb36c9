"""The vectorised standard Theta method against statsforecast's ``Theta`` and statsmodels' decomposition."""

import warnings

import numpy as np
import pytest
from statsforecast.models import Theta
from statsforecast.theta import auto_theta
from statsmodels.tsa.seasonal import seasonal_decompose

from forecaster.partners import standard_theta
from forecaster.partners.standard_theta import standard_theta_forecasts


def _series(n: int, seed: int, level: float = 50.0, season_length: int = 12, amplitude: float = 8.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    return level + 0.3 * t + amplitude * np.sin(2 * np.pi * t / season_length) + rng.normal(0, 1, n)


def _statsforecast(y: np.ndarray, season_length: int, horizon: int) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Theta(season_length=season_length).forecast(y=y, h=horizon)["mean"]


def _ours(y: np.ndarray, season_length: int, horizon: int) -> np.ndarray:
    return standard_theta_forecasts(y[None, :], np.array([len(y)]), horizon, season_length)[0]


CASES = {
    "multiplicative seasonality": (_series(60, 1), 12),
    "additive seasonality (values below zero)": (_series(60, 2, level=0.0), 12),
    "quarterly": (_series(30, 5, season_length=4), 4),
    "no seasonality test (m < 4)": (_series(40, 3), 1),
    "too short for the seasonality test": (_series(20, 4), 12),
    "random walk": (100 + np.cumsum(np.random.default_rng(6).normal(0, 1, 80)), 12),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_forecasts_match_statsforecast_theta(case):
    y, season_length = CASES[case]
    np.testing.assert_allclose(_ours(y, season_length, 7), _statsforecast(y, season_length, 7), rtol=2e-4)


def test_series_of_different_lengths_are_fitted_as_if_alone(monkeypatch):
    series = [_series(60, 1), _series(31, 7), _series(5, 8), _series(48, 2, level=0.0)]
    lengths = np.array([len(s) for s in series])
    stacked = np.full((len(series), lengths.max()), np.nan)
    for row, values in enumerate(series):
        stacked[row, : len(values)] = values
    together = standard_theta_forecasts(stacked, lengths, 9, 12)
    for row, values in enumerate(series):
        np.testing.assert_allclose(together[row], _ours(values, 12, 9), rtol=1e-12)
    monkeypatch.setattr(standard_theta, "SERIES_PER_BLOCK", 3)
    np.testing.assert_array_equal(standard_theta_forecasts(stacked, lengths, 9, 12), together)


@pytest.mark.parametrize("model", ["multiplicative", "additive"])
def test_seasonal_indices_are_the_classical_decomposition(model):
    y = _series(67, 9, level=80.0, amplitude=20.0)  # 67 periods: the last season is incomplete
    indices, kind = standard_theta._seasonal_indices(y[None, :], np.array([67]), np.ones((1, 67), bool), 12)
    if model == "additive":
        shifted = y - 100.0  # values below zero rule out the multiplicative decomposition
        indices, kind = standard_theta._seasonal_indices(shifted[None, :], np.array([67]), np.ones((1, 67), bool), 12)
        y = shifted
    expected = seasonal_decompose(y, model=model, period=12).seasonal[:12]
    assert kind[0] == (1 if model == "multiplicative" else 2)
    np.testing.assert_allclose(indices[0], expected, rtol=1e-10, atol=1e-10)


def test_no_decomposition_without_a_significant_seasonal_autocorrelation():
    y = 100 + np.cumsum(np.random.default_rng(3).normal(0, 1, 72))
    _, kind = standard_theta._seasonal_indices(y[None, :], np.array([72]), np.ones((1, 72), bool), 12)
    assert kind[0] == 0


@pytest.mark.parametrize("seed", range(8))
def test_fit_is_at_least_as_good_as_nelder_mead(seed):
    """The smoothing weight and initial level reach a one-step squared error no worse than statsforecast's fit."""
    rng = np.random.default_rng(seed)
    y = 200 + np.cumsum(rng.normal(0.5, 4, 90)) + rng.normal(0, 6, 90)
    lengths = np.array([len(y)])
    intercept, slope = standard_theta._linear_trend(y[None, :], lengths)
    alpha, fit = standard_theta._best_fit(y[None, :], lengths, intercept, slope)
    ours = fit.sse[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = auto_theta(y, 1, model="STM")
    theirs = fitted["mse"] * np.mean(np.abs(y))  # statsforecast divides the squared errors by mean |y|
    assert ours <= theirs * (1 + 1e-9)
    assert fitted["par"]["alpha"] == pytest.approx(alpha[0], abs=0.02) or ours < theirs * 0.999
