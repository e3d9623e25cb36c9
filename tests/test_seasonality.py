"""The long-run seasonal profile: what a plain decomposition gives, from data up to the origin only."""

import numpy as np
import pandas as pd
from conftest import fast_model
from hypothesis import given, settings
from hypothesis import strategies as st

from forecaster.seasonality import PROFILE_CYCLES, seasonal_profile, seasonal_profile_table


def _reference_profile(row: np.ndarray, origin: int, m: int) -> np.ndarray:
    """Mean deviation from a centred moving average per season position, by explicit loops."""
    lead = m // 2
    deviations: dict[int, list[float]] = {r: [] for r in range(m)}
    for c in range(origin - lead + 1):
        if m % 2:
            window = row[c - lead : c + lead + 1] if c - lead >= 0 else np.array([np.nan])
            weights = np.full(m, 1.0 / m)
        else:
            window = row[c - lead : c + lead + 1] if c - lead >= 0 else np.array([np.nan])
            weights = np.r_[0.5, np.ones(m - 1), 0.5] / m
        if len(window) != len(weights) or not np.isfinite(window).all() or not np.isfinite(row[c]):
            continue
        deviations[c % m].append((row[c] - window @ weights, c))
    means = {}
    for r, items in deviations.items():
        recent = [d for d, c in items if c > origin - lead - ((origin - lead - r) % m) - PROFILE_CYCLES * m]
        if recent:
            means[r] = np.mean(recent)
    centre = np.mean(list(means.values())) if means else 0.0
    return np.array([means[r] - centre if r in means else 0.0 for r in range(m)])


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.one_of(st.floats(-100, 100), st.just(float("nan"))), min_size=2, max_size=60),
    pad=st.integers(0, 5),
    season=st.integers(2, 7),
    data=st.data(),
)
def test_profile_matches_a_plain_loop_over_the_history(values, pad, season, data):
    row = np.array([np.nan] * pad + values)
    origin = data.draw(st.integers(0, len(row) - 1))
    table = seasonal_profile_table(row[None, :], season)
    cols = np.arange(origin - season + 1, origin + season + 1)[None, :]
    got = seasonal_profile(table, np.array([0]), np.array([origin]), cols, np.array([1.0]))[0]
    expected = _reference_profile(row, origin, season)[np.mod(cols[0], season)]
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)


def test_profile_recovers_a_seasonal_pattern_under_a_linear_trend():
    pattern = np.array([3.0, -1.0, 0.5, -2.5])
    t = np.arange(40)
    row = 10.0 + 0.7 * t + pattern[t % 4]
    table = seasonal_profile_table(row[None, :], 4)
    cols = np.arange(28, 40)[None, :]
    got = seasonal_profile(table, np.array([0]), np.array([31]), cols, np.array([2.0]))[0]
    np.testing.assert_allclose(got * 2.0, pattern[cols[0] % 4], atol=1e-12)


def test_profile_ignores_values_after_the_origin():
    rng = np.random.default_rng(0)
    row = rng.normal(size=(3, 60))
    changed = row.copy()
    changed[:, 41:] = rng.normal(100, 50, size=(3, 19))
    series, origins = np.arange(3), np.array([40, 40, 40])
    cols = origins[:, None] + np.arange(-11, 13)[None, :]
    before = seasonal_profile(seasonal_profile_table(row, 12), series, origins, cols, np.ones(3))
    after = seasonal_profile(seasonal_profile_table(changed, 12), series, origins, cols, np.ones(3))
    np.testing.assert_array_equal(before, after)
    assert np.abs(before).sum() > 0


def test_no_profile_without_seasonality():
    assert seasonal_profile_table(np.ones((2, 10)), 1) is None


def test_predict_from_the_stored_history_matches_predict_from_the_full_history(panel):
    df, _ = panel
    model = fast_model(season_length=4).fit(df)
    assert model.history_.groupby("unique_id").size().max() > model.input_size_, "the profile reads beyond the encoder window"
    pd.testing.assert_frame_equal(model.predict(), model.predict(df=df))
