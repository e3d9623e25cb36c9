"""Scale statistics and the MASE-aligned loss weights: only data up to the origin counts."""

import numpy as np
import pytest
from conftest import fast_model
from hypothesis import given, settings
from hypothesis import strategies as st

from forecaster.data.scaling import loss_scale, mase_scale, naive_error_table


def _reference_naive_scale(row: np.ndarray, origin: int, season: int) -> float:
    history = row[: origin + 1]
    for lag in (season, 1):
        diffs = np.abs(history[lag:] - history[:-lag])
        diffs = diffs[np.isfinite(diffs)]
        if len(diffs) and diffs.mean() > 0:
            return float(diffs.mean())
    return float("nan")


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.one_of(st.floats(-100, 100).map(lambda v: round(v, 6)), st.just(float("nan"))), min_size=2, max_size=40),
    pad=st.integers(0, 5),
    season=st.integers(1, 6),
    data=st.data(),
)
def test_loss_scale_matches_a_plain_loop_over_the_history(values, pad, season, data):
    row = np.array([np.nan] * pad + values)
    origin = data.draw(st.integers(0, len(row) - 1))
    table = naive_error_table(row[None, :], season)
    got = loss_scale(table, np.array([0]), np.array([origin]))[0]
    expected = _reference_naive_scale(row, origin, season)
    np.testing.assert_allclose(got, expected, rtol=1e-9, equal_nan=True)


def _reference_mase_scale(row: np.ndarray, start: int, origin: int, season: int) -> float:
    history = row[start : origin + 1]

    def mean_difference(lag: int) -> float:
        diffs = [abs(history[t] - history[t - lag]) for t in range(lag, len(history))]
        diffs = [d for d in diffs if np.isfinite(d)]
        return float(np.mean(diffs)) if diffs else float("nan")

    seasonal = mean_difference(season) if len(history) > season else float("nan")
    return seasonal if np.isfinite(seasonal) else mean_difference(1)


@settings(max_examples=80, deadline=None)
@given(
    values=st.lists(st.one_of(st.floats(-100, 100).map(lambda v: round(v, 6)), st.just(float("nan"))), min_size=2, max_size=40),
    pad=st.integers(0, 5),
    season=st.integers(1, 13),
    data=st.data(),
)
def test_mase_scale_is_the_standard_definition_from_any_start(values, pad, season, data):
    """Lag m when the history from its start to the origin has more than m periods and a lag-m pair, lag 1 otherwise."""
    row = np.array([np.nan] * pad + values)
    start = data.draw(st.integers(pad, len(row) - 1))
    origin = data.draw(st.integers(start, len(row) - 1))
    table = naive_error_table(row[None, :], season, np.array([pad]))
    got = mase_scale(table, np.array([0]), np.array([origin]), np.array([start]))[0]
    # Running sums carry an absolute error of a few ulps of the series' largest differences.
    tolerance = 1e-12 * (np.nanmax(np.abs(row)) if np.isfinite(row).any() else 1.0)
    np.testing.assert_allclose(got, _reference_mase_scale(row, start, origin, season), rtol=1e-9, atol=tolerance, equal_nan=True)


def test_a_history_observed_only_in_its_last_periods_is_scaled_by_lag_1():
    row = np.full(34, np.nan)
    row[-8:] = [5.0, 7.0, 4.0, 9.0, 9.0, 6.0, 8.0, 3.0]  # a span of 34 periods, but no pair 12 apart
    scale = mase_scale(naive_error_table(row[None], 12, np.array([0])), np.array([0]), np.array([33]))[0]
    assert scale == pytest.approx(np.mean(np.abs(np.diff(row[-8:]))))


def test_naive_scale_ignores_values_after_the_origin():
    rng = np.random.default_rng(0)
    row = rng.normal(size=30)
    changed = row.copy()
    changed[21:] = 1e6
    origin = np.array([20])
    for kernel in (loss_scale, mase_scale):
        before = kernel(naive_error_table(row[None], 4), np.array([0]), origin)
        after = kernel(naive_error_table(changed[None], 4), np.array([0]), origin)
        assert before == after


def test_seasonal_naive_loss_scale_trains_and_forecasts(panel):
    df, _ = panel
    model = fast_model(loss_scale="seasonal_naive", early_stopping=True, max_steps=60).fit(df)
    forecast = model.predict()
    assert np.isfinite(forecast["y_hat"]).all()
    assert model.train_result_.val_loss, "early stopping saw a weighted validation loss"


def test_log_target_forecasts_non_negative_values_and_refuses_negative_targets(panel):
    df, _ = panel
    positive = df.assign(y=df["y"].abs())
    forecast = fast_model(log_target=True).fit(positive).predict()
    assert (forecast.drop(columns=["unique_id", "ds"]) > -1).all().all()
    bad = positive.copy()
    bad.loc[5, "y"] = -2.0
    with pytest.raises(ValueError, match=rf"series '{bad.loc[5, 'unique_id']}' at {bad.loc[5, 'ds']}"):
        fast_model(log_target=True).fit(bad)


@pytest.mark.parametrize("scaler", ["standard", "robust", "meanabs"])
def test_scale_derivatives_are_the_scalers_own_and_the_parts_of_the_scale_sum_to_one(scaler):
    """Against finite differences of window_stats itself; the parts of the scale sum to 1, the level's to 0."""
    from forecaster.data.scaling import scale_derivatives, window_stats

    rng = np.random.default_rng(4)
    history = rng.normal(5.0, 2.0, (5, 13))
    history[0, :4] = np.nan  # padding
    history[1, 6] = np.nan  # a missing value
    history[2] = 1e7 + rng.normal(0.0, 1.0, 13)  # a level far above the spread: a genuine scale all the same
    dloc, spread, regular = scale_derivatives(history, scaler)
    loc, scale = window_stats(history, scaler)
    assert regular.all()
    step = 1e-3  # central differences: float rounding at 1e7 and the curvature both stay near 1e-6
    for t in range(history.shape[1]):
        up, down = history.copy(), history.copy()
        up[:, t] += step
        down[:, t] -= step
        (loc_up, scale_up), (loc_down, scale_down) = window_stats(up, scaler), window_stats(down, scaler)
        seen = np.isfinite(history[:, t])
        np.testing.assert_allclose(dloc[seen, t], ((loc_up - loc_down) / (2 * step))[seen], atol=1e-5)
        deviation = np.where(seen, history[:, t] - loc, 0.0)
        np.testing.assert_allclose(spread[:, t], deviation * (scale_up - scale_down) / (2 * step) / scale, atol=1e-5)
    np.testing.assert_allclose(spread.sum(axis=1), 1.0, rtol=1e-9)
    np.testing.assert_allclose(np.nansum((history - loc[:, None]) * dloc, axis=1) / scale, 0.0, atol=1e-6)


def test_tied_values_share_the_robust_scalers_derivatives_and_a_fallen_back_scale_has_none():
    from forecaster.data.scaling import scale_derivatives

    history = np.array(
        [
            [1.0, 2.0, 2.0, 2.0, 3.0, 4.0, 5.0, 5.0, 6.0, 7.0],
            [0.0, 0.0, 0.0, 9.0, 0.0, 0.0, 0.0, 0.0, 5.0, 0.0],  # intermittent: a zero interquartile range
            [3.0] * 10,  # constant
        ]
    )
    dloc, spread, regular = scale_derivatives(history, "robust")
    assert spread[0, 1] == spread[0, 2] == spread[0, 3] > 0  # the three 2s alike, whatever order a sort leaves them in
    assert spread[0, 6] == spread[0, 7]
    assert list(regular) == [True, False, False] and (spread[1:] == 0).all()
