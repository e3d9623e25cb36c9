"""Weekly partners on data finer than a day (``weekly_partners``): each window fits its partners with the week as
their season where, over its last four weeks, a week-ago value forecast better than a day-ago one; otherwise as
before. The choice reads nothing after the origin, is resolved once per fit and saved with the model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import fast_model

from forecaster import Seq2SeqForecaster, backtest
from forecaster.model.resolve import partner_week
from forecaster.partners.blend import PARTNERS, partner_distributions
from forecaster.partners.season import PARTNER_WEEKS, prefers_week

DAY, WEEK = 24, 168
FITS = [PARTNERS["theta_weight"].fit, PARTNERS["holt_winters_weight"].fit]


def _weekly(n: int, weeks: int, seed: int = 0) -> np.ndarray:
    """Hourly series whose weekends run at half the weekdays' level: the week is the stronger cycle."""
    rng = np.random.default_rng(seed)
    t = np.arange(weeks * WEEK)
    weekend = (t // DAY) % 7 >= 5
    shape = (1 + 0.5 * np.sin(2 * np.pi * t / DAY)) * np.where(weekend, 0.5, 1.0)
    return 100 * shape[None, :] + rng.normal(0, 2, (n, len(t)))


def _daily(n: int, weeks: int, seed: int = 1) -> np.ndarray:
    """Hourly series with a daily cycle on a level that wanders from day to day: a day-ago value is the better guess."""
    rng = np.random.default_rng(seed)
    t = np.arange(weeks * WEEK)
    level = np.repeat(np.cumsum(rng.normal(0, 8, (n, weeks * 7)), axis=1), DAY, axis=1)
    return 100 + level + 20 * np.sin(2 * np.pi * t / DAY)[None, :] + rng.normal(0, 1, (n, len(t)))


def test_the_week_is_taken_where_it_forecast_better_over_the_last_four_weeks_and_never_on_less_history():
    y = np.vstack([_weekly(3, 6), _daily(3, 6)])
    first = np.zeros(len(y), dtype=int)
    last = y.shape[1] - 1
    chosen = prefers_week(y, first, np.arange(6), np.full(6, last), DAY, WEEK)
    assert chosen.tolist() == [True] * 3 + [False] * 3
    short = PARTNER_WEEKS * WEEK - 2  # an origin with one period less than four weeks behind it
    assert not prefers_week(y, first, np.arange(3), np.full(3, short), DAY, WEEK).any()
    late = np.full(len(y), 3 * WEEK)  # series starting three weeks in: three weeks of history at the same origin
    assert not prefers_week(y, late, np.arange(3), np.full(3, last), DAY, WEEK).any()


def test_the_choice_reads_nothing_after_the_origin():
    y = np.vstack([_weekly(2, 6), _daily(2, 6)])
    origin = 5 * WEEK
    before = prefers_week(y, np.zeros(4, dtype=int), np.arange(4), np.full(4, origin), DAY, WEEK)
    swapped = y.copy()
    swapped[:, origin + 1 :] = swapped[::-1, origin + 1 :] * 3  # every value after the origin changed
    after = prefers_week(swapped, np.zeros(4, dtype=int), np.arange(4), np.full(4, origin), DAY, WEEK)
    np.testing.assert_array_equal(before, after)


def test_windows_that_take_the_week_get_weekly_partners_and_the_others_are_unchanged():
    y = np.vstack([_weekly(2, 6), _daily(2, 6)])
    first, series = np.zeros(4, dtype=int), np.arange(4)
    origins = np.full(4, 5 * WEEK - 1)  # a Sunday night: the next day is a Monday
    history = 11 * DAY
    mixed = partner_distributions(FITS, y, first, origins, DAY, DAY, history, series=series, week=WEEK)
    daily = partner_distributions(FITS, y, first, origins, DAY, DAY, history, series=series)
    weekly = partner_distributions(FITS, y, first, origins, DAY, WEEK, PARTNER_WEEKS * WEEK, series=series)
    for k in range(len(FITS)):
        np.testing.assert_array_equal(mixed[k].mean[2:], daily[k].mean[2:])
        np.testing.assert_array_equal(mixed[k].mean[:2], weekly[k].mean[:2])
    hw = 1  # Holt-Winters has a distribution: its spread follows the same rows
    np.testing.assert_array_equal(mixed[hw].distribution.spread[:2], weekly[hw].distribution.spread[:2])
    np.testing.assert_array_equal(mixed[hw].distribution.spread[2:], daily[hw].distribution.spread[2:])
    actual = y[:2, origins[0] + 1 : origins[0] + 1 + DAY]
    for k in range(len(FITS)):  # on weekly series the weekly partner does not forecast Monday like Sunday
        assert np.abs(weekly[k].mean[:2] - actual).mean() < 0.5 * np.abs(daily[k].mean[:2] - actual).mean()


@pytest.mark.parametrize(
    ("freq", "season", "given", "expected"),
    [
        ("h", 24, None, 168),
        ("30min", 48, None, 336),
        ("15min", 96, None, 672),
        ("5min", 288, None, 0),  # four weeks of 5-minute data per window: only on request
        ("5min", 288, True, 2016),
        ("h", 168, None, 0),  # the season is already the week
        ("h", 24, False, 0),
        ("D", 7, None, 0),
        ("MS", 12, None, 0),
    ],
)
def test_the_week_is_allowed_on_data_finer_than_a_day_whose_season_is_the_day(freq, season, given, expected):
    assert partner_week(given, pd.tseries.frequencies.to_offset(freq), season) == expected


def test_asking_for_weekly_partners_on_data_without_a_week_of_days_is_refused():
    df = pd.DataFrame({"unique_id": "a", "ds": pd.date_range("2000-01-01", periods=60, freq="MS"), "y": np.arange(60.0)})
    with pytest.raises(ValueError, match=r"weekly_partners=True needs data finer than a day"):
        fast_model(weekly_partners=True).fit(df)
    with pytest.raises(ValueError, match=r"`weekly_partners` must be True, False or None"):
        fast_model(weekly_partners="yes").fit(df)


def _hourly_frame(weeks: int = 6) -> pd.DataFrame:
    y = np.vstack([_weekly(3, weeks), _daily(1, weeks)])
    ds = pd.date_range("2024-01-01", periods=y.shape[1], freq="h")
    return pd.concat([pd.DataFrame({"unique_id": f"s{i}", "ds": ds, "y": row}) for i, row in enumerate(y)], ignore_index=True)


@pytest.fixture(scope="module")
def hourly_fits():
    df = _hourly_frame()
    settings = dict(horizon=DAY, input_size=48, theta_weight=0.3, holt_winters_weight=0.3)
    return df, fast_model(**settings).fit(df), fast_model(weekly_partners=False, **settings).fit(df)


def test_a_fit_on_hourly_data_resolves_the_week_and_forecasts_weekends_better(hourly_fits):
    df, weekly, daily = hourly_fits
    assert weekly.partner_week_ == WEEK and daily.partner_week_ == 0
    assert len(weekly.history_[weekly.history_.unique_id == "s0"]) >= PARTNER_WEEKS * WEEK  # predict() can read them
    truth = _hourly_frame(weeks=7).groupby("unique_id").tail(WEEK).groupby("unique_id").head(DAY)  # a Monday
    errors = {}
    for name, model in (("weekly", weekly), ("daily", daily)):
        forecast = model.predict().merge(truth, on=["unique_id", "ds"])
        errors[name] = (forecast["y_hat"] - forecast["y"]).abs()[forecast.unique_id != "s3"].mean()
    assert errors["weekly"] < errors["daily"]  # Sunday's level is not Monday's


def test_the_allowed_week_is_saved_and_older_files_keep_daily_partners(hourly_fits, tmp_path):
    _, weekly, _ = hourly_fits
    weekly.save(tmp_path / "model")
    loaded = Seq2SeqForecaster.load(tmp_path / "model")
    assert loaded.partner_week_ == WEEK and loaded.weekly_partners is None
    pd.testing.assert_frame_equal(loaded.predict(), weekly.predict())
    old = Seq2SeqForecaster.load(Path(__file__).parent / "data" / "model_0_3_0")
    assert old.partner_week_ == 0 and old.weekly_partners is False


def test_a_backtest_fold_with_weekly_partners_reads_nothing_after_its_cutoff():
    df = _hourly_frame()
    model = fast_model(horizon=DAY, input_size=48, theta_weight=0.3, holt_winters_weight=0.3)
    base = backtest(model, df, n_windows=2, step_size=DAY, baselines=(), progress=False)
    cutoff = base.forecasts["cutoff"].min()
    moved = df.assign(y=np.where(df["ds"] > cutoff, df["y"] * 5, df["y"]))
    again = backtest(model, moved, n_windows=2, step_size=DAY, baselines=(), progress=False)
    first = base.forecasts[base.forecasts.cutoff == cutoff].reset_index(drop=True)
    rerun = again.forecasts[again.forecasts.cutoff == cutoff].reset_index(drop=True)
    pd.testing.assert_frame_equal(first.drop(columns="y"), rerun.drop(columns="y"))
