"""The long-run trend line and seasonal profile: what a plain decomposition gives, from data up to the origin only."""

import numpy as np
import pandas as pd
import pytest
from conftest import fast_model
from hypothesis import given, settings
from hypothesis import strategies as st

from forecaster import Seq2SeqForecaster
from forecaster.data.decomposition import (
    PROFILE_CYCLES,
    PROFILE_LIMIT,
    TREND_CYCLES,
    at_columns,
    decomposition_table,
    window_decomposition,
)
from forecaster.data.frequency import normalise_freq, season_length_for, season_spans_a_year
from forecaster.datasets import make_panel


def decomposition_inputs(table, series, origins, cols, scale, loc=None):
    """Input channels (B, K, channels) at ``cols`` for windows (series, origin), as the windows module reads them."""
    loc = np.zeros(len(series)) if loc is None else loc
    return at_columns(window_decomposition(table, series, origins, loc, scale), cols)


def seasonal_profile_table(y, season_length):
    return decomposition_table(y, season_length, seasonal=True, trend=False)


def seasonal_profile(table, series, origins, cols, scale):
    return decomposition_inputs(table, series, origins, cols, scale)


def _moving_average(row: np.ndarray, c: int, m: int) -> float:
    """The centred moving average at column ``c`` by its definition, NaN when any input is missing."""
    lead = m // 2
    weights = np.full(m, 1.0 / m) if m % 2 else np.r_[0.5, np.ones(m - 1), 0.5] / m
    window = row[c - lead : c + lead + 1] if c - lead >= 0 else np.array([])
    return float(window @ weights) if len(window) == len(weights) and np.isfinite(window).all() else np.nan


def _reference_profile(row: np.ndarray, origin: int, m: int) -> np.ndarray:
    """Additive and multiplicative profile (m, 2) at the origin, by explicit loops over the history."""
    lead = m // 2

    def moving_average(c: int) -> float:
        return _moving_average(row, c, m)

    cutoff = origin - lead
    channels = []
    for kind in ("additive", "multiplicative"):
        means = {}
        for r in range(m):
            latest = cutoff - ((cutoff - r) % m)
            values = []
            for c in range(max(latest - (PROFILE_CYCLES - 1) * m, r), latest + 1, m):
                ma = moving_average(c)
                if not (np.isfinite(row[c]) and np.isfinite(ma)) or (kind == "multiplicative" and ma <= 0):
                    continue
                values.append(row[c] - ma if kind == "additive" else row[c] / ma - 1.0)
            if values:
                means[r] = np.mean(values)
        centre = np.mean(list(means.values())) if means else 0.0
        channels.append(np.array([means[r] - centre if r in means else 0.0 for r in range(m)]))
    level = moving_average(cutoff) if cutoff >= 0 else np.nan
    channels[1] = channels[1] * (level if np.isfinite(level) and level > 0 else 0.0)
    return np.clip(np.stack(channels, axis=1), -PROFILE_LIMIT, PROFILE_LIMIT)


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.one_of(st.floats(-100, 100), st.just(float("nan"))), min_size=2, max_size=60),
    shift=st.sampled_from([0.0, 200.0]),
    pad=st.integers(0, 5),
    season=st.integers(2, 7),
    data=st.data(),
)
def test_profile_matches_a_plain_loop_over_the_history(values, shift, pad, season, data):
    row = np.array([np.nan] * pad + values) + shift  # shift: positive series, where the multiplicative channel is live
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
    np.testing.assert_allclose(got[:, 0] * 2.0, pattern[cols[0] % 4], atol=1e-12)


def test_multiplicative_channel_recovers_seasonal_ratios_at_the_current_level():
    ratios = np.array([0.2, -0.1, 0.05, -0.15])
    t = np.arange(40)
    row = 50.0 * (1.0 + ratios[t % 4])
    table = seasonal_profile_table(row[None, :], 4)
    cols = np.arange(32, 40)[None, :]
    got = seasonal_profile(table, np.array([0]), np.array([31]), cols, np.array([5.0]))[0]
    np.testing.assert_allclose(got[:, 1] * 5.0, 50.0 * ratios[cols[0] % 4], atol=1e-12)


def test_trend_and_profile_ignore_values_after_the_origin():
    rng = np.random.default_rng(0)
    row = rng.normal(size=(3, 60))
    changed = row.copy()
    changed[:, 41:] = rng.normal(100, 50, size=(3, 19))
    series, origins = np.arange(3), np.array([40, 40, 40])
    cols = origins[:, None] + np.arange(-11, 13)[None, :]
    loc, scale = np.array([0.5, -1.0, 2.0]), np.array([1.0, 2.0, 0.5])
    before = decomposition_inputs(decomposition_table(row, 12), series, origins, cols, scale, loc)
    after = decomposition_inputs(decomposition_table(changed, 12), series, origins, cols, scale, loc)
    assert before.shape[2] == 3
    np.testing.assert_array_equal(before, after)
    assert np.abs(before).sum() > 0


def test_profile_stays_bounded_when_the_moving_average_nears_zero():
    t = np.arange(48)
    row = 5.0 * np.sin(2 * np.pi * t / 4) + np.where(t < 40, 1e-9, 100.0)  # level near 0, then a jump
    table = seasonal_profile_table(row[None, :], 4)
    got = seasonal_profile(table, np.array([0]), np.array([47]), np.arange(44, 52)[None, :], np.array([0.5]))
    assert np.isfinite(got).all() and np.abs(got).max() <= PROFILE_LIMIT


def _reference_trend_line(row: np.ndarray, origin: int, m: int, cols: np.ndarray, loc: float, scale: float) -> np.ndarray:
    """The trend line at ``cols`` by a scan over the moving averages known at the origin."""
    cutoff = origin - m // 2
    known = [c for c in range(0, cutoff + 1) if np.isfinite(_moving_average(row, c, m))]
    if not known:
        return np.zeros(len(cols))
    end = known[-1]
    start = min(c for c in known if c >= cutoff - TREND_CYCLES * m) if end >= cutoff - TREND_CYCLES * m else end
    level = _moving_average(row, end, m)
    slope = (level - _moving_average(row, start, m)) / (end - start) if end - start >= m else 0.0
    return np.clip((level + slope * (cols - end) - loc) / scale, -PROFILE_LIMIT, PROFILE_LIMIT)


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.one_of(st.floats(-100, 100), st.just(float("nan"))), min_size=2, max_size=80),
    pad=st.integers(0, 5),
    season=st.integers(1, 6),
    loc=st.floats(-50, 50),
    scale=st.floats(0.5, 20),
    data=st.data(),
)
def test_trend_line_matches_a_plain_scan_over_the_history(values, pad, season, loc, scale, data):
    row = np.array([np.nan] * pad + values)
    origin = data.draw(st.integers(0, len(row) - 1))
    table = decomposition_table(row[None, :], season, seasonal=False, trend=True)
    assert table.channels == 1
    cols = np.arange(origin - 5, origin + 6)
    got = decomposition_inputs(table, np.array([0]), np.array([origin]), cols[None, :], np.array([scale]), np.array([loc]))
    expected = _reference_trend_line(row, origin, season, cols, loc, scale)
    np.testing.assert_allclose(got[0, :, 0], expected, rtol=1e-9, atol=1e-9)


def test_trend_line_recovers_a_linear_trend_through_seasonality():
    t = np.arange(60)
    row = 10.0 + 0.7 * t + np.array([3.0, -1.0, 0.5, -2.5])[t % 4]
    table = decomposition_table(row[None, :], 4)
    assert table.channels == 3
    cols = np.arange(40, 60)[None, :]
    got = decomposition_inputs(table, np.array([0]), np.array([47]), cols, np.array([4.0]), np.array([30.0]))[0, :, 2]
    np.testing.assert_allclose(got * 4.0 + 30.0, 10.0 + 0.7 * cols[0], atol=1e-9)


def test_no_table_when_nothing_is_asked_or_possible():
    assert decomposition_table(np.ones((2, 10)), 1, seasonal=True, trend=False) is None
    assert decomposition_table(np.ones((2, 10)), 12, seasonal=False, trend=False) is None


def test_predict_from_the_stored_history_matches_predict_from_the_full_history(panel):
    df, _ = panel
    model = fast_model(season_length=2).fit(df)
    kept = model.history_.groupby("unique_id").size().max()
    assert model.input_size_ < kept < df.groupby("unique_id").size().max(), "the stored tail is cut, beyond the encoder window"
    pd.testing.assert_frame_equal(model.predict(), model.predict(df=df))


@pytest.mark.parametrize(
    ("freq", "on"), [("YS", True), ("QS", True), ("MS", True), ("W", True), ("D", False), ("B", False), ("h", False)]
)
def test_trend_line_is_on_by_default_only_where_a_season_spans_a_year(freq, on):
    offset = normalise_freq(freq)
    assert season_spans_a_year(offset, season_length_for(offset)) is on


def test_a_yearly_season_on_daily_data_spans_a_year():
    assert season_spans_a_year(normalise_freq("D"), 365)
    assert not season_spans_a_year(normalise_freq("D"), 300)


def test_default_trend_line_adds_one_input_channel_on_monthly_data(panel):
    df, _ = panel
    widths = {flag: fast_model(trend_line=flag).fit(df).network_config_.future_features for flag in (None, True, False)}
    assert widths[None] == widths[True] == widths[False] + 1


def test_yearly_data_gets_the_trend_line_alone_and_predicts_from_its_stored_tail():
    df, _ = make_panel(n_series=8, length=40, freq="YS", seed=3, season_lengths=(1,))
    model = Seq2SeqForecaster(horizon=4, input_size=8, max_steps=30, progress=False).fit(df)
    without = Seq2SeqForecaster(horizon=4, input_size=8, max_steps=30, progress=False, trend_line=False).fit(df)
    assert model.network_config_.future_features == without.network_config_.future_features + 1  # no seasonal channels
    forecast = model.predict()
    assert np.isfinite(forecast["y_hat"]).all()
    assert model.input_size_ < model.history_.groupby("unique_id").size().max() < 40
    pd.testing.assert_frame_equal(forecast, model.predict(df=df))


def test_daily_data_keeps_only_the_tail_its_seasonal_profile_reads():
    df, _ = make_panel(n_series=6, length=140, freq="D", seed=4, season_lengths=(7,))
    model = Seq2SeqForecaster(horizon=7, input_size=14, max_steps=20, progress=False).fit(df)
    kept = model.history_.groupby("unique_id").size().max()
    assert model.input_size_ < kept < (TREND_CYCLES + 1) * 7  # the trend line is off for daily data
    pd.testing.assert_frame_equal(model.predict(), model.predict(df=df))
