"""Frequency helpers: offset aliases, season lengths, frequency inference, the calendar grid and its features."""

import warnings
from datetime import time
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from forecaster.data import frequency
from forecaster.data.frequency import (
    build_grid,
    calendar_features,
    infer_offset,
    normalise_freq,
    season_length_for,
    season_spans_a_year,
)


def _season(alias: str) -> int:
    return season_length_for(normalise_freq(alias))


# ---------------------------------------------------------------- normalise_freq


@pytest.mark.parametrize(
    ("alias", "offset"),
    [
        ("MS", pd.offsets.MonthBegin()),
        ("QS-OCT", pd.offsets.QuarterBegin(startingMonth=10)),
        ("W-SUN", pd.offsets.Week(weekday=6)),
        ("2h", pd.offsets.Hour(2)),
        ("30min", pd.offsets.Minute(30)),
        ("B", pd.offsets.BusinessDay()),
    ],
)
def test_normalise_freq_turns_aliases_into_offsets(alias, offset):
    assert normalise_freq(alias) == offset
    assert normalise_freq(offset) == offset  # an offset passes through


@pytest.mark.parametrize("bad", ["fortnightly", "", "3X", 12])
def test_normalise_freq_rejects_bad_aliases_with_a_hint(bad):
    with pytest.raises(ValueError, match="not a pandas offset alias"):
        normalise_freq(bad)


# ---------------------------------------------------------------- season_length_for

# Every calendar frequency with its season at n=1: the periods in the next calendar cycle up.
CALENDAR_SEASONS = {
    "YS": 1,
    "YE": 1,
    "YS-JUL": 1,
    "BYS": 1,
    "BYE": 1,
    "QS": 4,
    "QE": 4,
    "QS-OCT": 4,
    "QE-NOV": 4,
    "BQS": 4,
    "BQE": 4,
    "MS": 12,
    "ME": 12,
    "BMS": 12,
    "BME": 12,
    "CBMS": 12,
    "CBME": 12,
    "SMS": 24,
    "SME": 24,
    "W": 52,
    "W-SUN": 52,
    "W-MON": 52,
    "D": 7,
    "B": 5,
    "C": 5,
    "bh": 8,
    "cbh": 8,
}

# Fixed periods shorter than a day: the periods in one day, for periods of a minute or more.
SUB_DAILY_SEASONS = {
    "h": 24,
    "2h": 12,
    "3h": 8,
    "4h": 6,
    "6h": 4,
    "8h": 3,
    "12h": 2,
    "90min": 16,
    "30min": 48,
    "20min": 72,
    "15min": 96,
    "10min": 144,
    "5min": 288,
    "2min": 720,
    "min": 1440,
    "60s": 1440,
    "90s": 960,
    "120s": 720,
}


@pytest.mark.parametrize(("alias", "season"), {**CALENDAR_SEASONS, **SUB_DAILY_SEASONS}.items())
def test_season_length_of_every_frequency(alias, season):
    assert _season(alias) == season


# The base names pandas 2.0 and 2.1 give (today's to_offset maps these aliases to "YE", "ME"...).
LEGACY_SEASONS = {
    "Y": 1,
    "A": 1,
    "AS": 1,
    "BY": 1,
    "BA": 1,
    "BAS": 1,
    "Q": 4,
    "BQ": 4,
    "M": 12,
    "BM": 12,
    "CBM": 12,
    "SM": 24,
}


@pytest.mark.parametrize(("name", "season"), LEGACY_SEASONS.items())
def test_season_length_of_offsets_named_as_older_pandas_names_them(name, season):
    for n in (1, 2, 5):
        expected = season // n if season % n == 0 else 1
        assert season_length_for(SimpleNamespace(name=f"{name}-DEC", n=n)) == expected
    business_hour = SimpleNamespace(name="BH", n=1, start=(time(9),), end=(time(17),))
    assert season_length_for(business_hour) == 8


def test_every_row_of_the_season_table_is_tested():
    bases = {normalise_freq(alias).name.split("-")[0] for alias in CALENDAR_SEASONS}
    assert set(frequency._SEASON_BY_BASE) <= bases | set(LEGACY_SEASONS)
    for name, season in LEGACY_SEASONS.items():
        assert frequency._SEASON_BY_BASE[name] == season


@pytest.mark.parametrize("alias", list(CALENDAR_SEASONS))
def test_a_multiple_spans_the_same_cycle_in_n_times_fewer_periods(alias):
    season = CALENDAR_SEASONS[alias]
    for n in range(1, 13):
        expected = season // n if season % n == 0 else 1
        if _season(alias) == _season("D") and n % 7 == 0:  # whole weeks of days: the yearly cycle, as 'W' has
            expected = _season("W") // (n // 7)
        assert season_length_for(normalise_freq(alias) * n) == expected, f"{n} x {alias}"


@pytest.mark.parametrize("unit", ["h", "min"])
def test_sub_daily_multiples_divide_the_daily_season_of_their_base(unit):
    base = _season(unit)
    assert base == {"h": 24, "min": 1440}[unit]
    for n in range(1, base):  # every multiple shorter than a day
        expected = base // n if base % n == 0 else 1
        assert _season(f"{n}{unit}") == expected, f"{n}{unit}"


@pytest.mark.parametrize(
    ("alias", "same"),
    [
        ("60min", "h"),
        ("3600s", "h"),
        ("60s", "min"),
        ("120s", "2min"),
        ("1h30min", "90min"),
        ("24h", "D"),
        ("1440min", "D"),
        ("7D", "W"),
        ("168h", "W"),
        ("14D", "2W"),
    ],
)
def test_equal_period_lengths_get_equal_seasons_whatever_the_alias(alias, same):
    assert _season(alias) == _season(same)


@pytest.mark.parametrize("alias", ["7min", "7h", "5h", "2D", "3D", "21D", "48h", "36h", "3W", "5MS", "7QS", "2YS"])
def test_a_multiple_that_does_not_divide_the_cycle_has_no_season(alias):
    assert _season(alias) == 1


@pytest.mark.parametrize("alias", ["s", "2s", "15s", "30s", "59s", "ms", "us", "ns"])
def test_periods_under_a_minute_have_no_default_season(alias):
    assert _season(alias) == 1


def test_business_hours_season_is_the_periods_of_the_business_day():
    assert season_length_for(pd.offsets.BusinessHour()) == 8  # 09:00-17:00
    assert season_length_for(pd.offsets.BusinessHour(2)) == 4
    assert season_length_for(pd.offsets.BusinessHour(3)) == 1
    assert season_length_for(pd.offsets.CustomBusinessHour(start="08:00", end="18:00")) == 10
    assert season_length_for(pd.offsets.BusinessHour(start="22:00", end="06:00")) == 8  # past midnight
    assert season_length_for(pd.offsets.BusinessHour(start=["08:00", "13:00"], end=["12:00", "17:00"])) == 8


def test_unknown_frequencies_have_no_season():
    assert _season("WOM-1MON") == 1


def test_legacy_aliases_still_map_to_their_seasons():
    legacy = {"M": 12, "Q": 4, "Y": 1, "A": 1, "BQ": 4, "BM": 12, "SM": 24, "H": 24, "T": 1440, "2T": 720, "S": 1, "BH": 8}
    for alias, season in legacy.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                offset = normalise_freq(alias)
            except ValueError:  # a later pandas dropped the alias
                continue
        assert season_length_for(offset) == season, alias


# ---------------------------------------------------------------- season_spans_a_year


@pytest.mark.parametrize(
    ("alias", "spans"),
    [
        ("YS", True),
        ("YE", True),
        ("QS", True),
        ("QS-OCT", True),
        ("BQE", True),
        ("MS", True),
        ("ME", True),
        ("SMS", True),
        ("SME", True),
        ("W", True),
        ("2W", True),
        ("D", False),
        ("B", False),
        ("h", False),
        ("30min", False),
        ("min", False),
        ("bh", False),
    ],
)
def test_default_season_spans_a_year_only_for_weekly_and_longer_periods(alias, spans):
    offset = normalise_freq(alias)
    assert season_spans_a_year(offset, season_length_for(offset)) is spans


@pytest.mark.parametrize(
    ("alias", "longest_short", "shortest_long"),
    # from the offset's first date on or after 2001-01-01: 12 month ends span 2001-01-31 to 2002-01-31 (365 days),
    # 50 weeks from Sunday 2001-01-07 span 350 days
    [("MS", 11, 12), ("ME", 11, 12), ("D", 349, 350), ("W", 49, 50)],
)
def test_season_spans_a_year_from_350_days(alias, longest_short, shortest_long):
    offset = normalise_freq(alias)
    assert not season_spans_a_year(offset, longest_short)
    assert season_spans_a_year(offset, shortest_long)


# ---------------------------------------------------------------- infer_offset


def _panel(**series) -> tuple[pd.Series, pd.Series]:
    frames = [pd.DataFrame({"id": name, "ds": pd.DatetimeIndex(ds)}) for name, ds in series.items()]
    frame = pd.concat(frames, ignore_index=True)
    return frame["ds"], frame["id"]


@pytest.mark.parametrize("alias", ["MS", "QS-OCT", "W-SUN", "W-MON", "D", "B", "h", "30min", "YS", "BQE-DEC"])
def test_infer_offset_finds_the_panel_frequency(alias):
    times, ids = _panel(
        a=pd.date_range("2001-01-01", periods=30, freq=alias), b=pd.date_range("2002-06-01", periods=7, freq=alias)
    )
    assert infer_offset(times, ids) == normalise_freq(alias)


def test_infer_offset_ignores_short_and_irregular_series():
    times, ids = _panel(
        regular=pd.date_range("2001-01-01", periods=10, freq="MS"),
        two=pd.to_datetime(["2001-01-01", "2001-01-08"]),  # fewer than 3 timestamps: weekly by its gap alone
        gappy=pd.to_datetime(["2001-01-01", "2001-01-02", "2001-01-05", "2001-01-06"]),
    )
    assert infer_offset(times, ids) == pd.offsets.MonthBegin()


def test_infer_offset_raises_when_no_series_is_regular():
    times, ids = _panel(
        gappy=pd.to_datetime(["2001-01-01", "2001-01-02", "2001-01-05", "2001-01-06"]),
        short=pd.to_datetime(["2001-01-01", "2001-02-01"]),
    )
    with pytest.raises(ValueError, match="Could not infer the frequency"):
        infer_offset(times, ids)


def test_infer_offset_raises_on_mixed_frequencies_naming_the_series():
    times, ids = _panel(
        monthly=pd.date_range("2001-01-01", periods=12, freq="MS"), weekly=pd.date_range("2001-01-07", periods=12, freq="W")
    )
    with pytest.raises(ValueError, match="Mixed frequencies") as error:
        infer_offset(times, ids)
    assert "'monthly' looks 'MS'" in str(error.value) and "'weekly' looks 'W-SUN'" in str(error.value)


# ---------------------------------------------------------------- build_grid


def test_build_grid_pads_before_the_first_and_after_the_last_period():
    grid = build_grid(pd.Timestamp("2001-03-01"), pd.Timestamp("2001-06-01"), normalise_freq("MS"), before=2, after=3)
    expected = pd.date_range("2001-01-01", "2001-09-01", freq="MS")
    pd.testing.assert_index_equal(grid, expected)
    assert len(grid) == 2 + 4 + 3


def test_build_grid_without_padding_spans_first_to_last():
    grid = build_grid(pd.Timestamp("2001-01-01 22:00"), pd.Timestamp("2001-01-02 02:00"), normalise_freq("h"), 0, 0)
    assert list(grid.hour) == [22, 23, 0, 1, 2]


def test_build_grid_with_an_anchored_offset():
    grid = build_grid(pd.Timestamp("2001-10-01"), pd.Timestamp("2002-04-01"), normalise_freq("QS-OCT"), before=1, after=1)
    assert [str(t.date()) for t in grid] == ["2001-07-01", "2001-10-01", "2002-01-01", "2002-04-01", "2002-07-01"]


# ---------------------------------------------------------------- calendar_features


def _angle(position, period):
    angle = 2 * np.pi * np.asarray(position, dtype=float) / period
    return np.sin(angle), np.cos(angle)


@pytest.mark.parametrize("alias", ["MS", "ME", "BMS", "BME", "CBMS", "SMS", "SME"])
def test_calendar_features_of_monthly_data_are_the_month_on_a_circle(alias):
    grid = pd.date_range("2001-01-01", periods=24, freq=alias)
    features = calendar_features(grid, normalise_freq(alias))
    assert features.shape == (24, 2) and features.dtype == np.float32
    sin, cos = _angle(grid.month - 1, 12)
    np.testing.assert_allclose(features, np.stack([sin, cos], axis=1), atol=1e-6)


def test_monthly_features_put_december_next_to_january():
    grid = pd.date_range("2001-01-01", periods=12, freq="MS")
    features = calendar_features(grid, normalise_freq("MS"))
    np.testing.assert_allclose(features[0], [0, 1], atol=1e-6)  # January
    np.testing.assert_allclose(features[3], [1, 0], atol=1e-6)  # April
    np.testing.assert_allclose(features[6], [0, -1], atol=1e-6)  # July
    assert np.linalg.norm(features[11] - features[0]) == pytest.approx(np.linalg.norm(features[1] - features[0]), rel=1e-5)


@pytest.mark.parametrize("alias", ["QS", "QE", "QS-OCT", "BQS", "BQE"])
def test_calendar_features_of_quarterly_data_are_the_quarter_on_a_circle(alias):
    grid = pd.date_range("2001-01-01", periods=8, freq=alias)
    features = calendar_features(grid, normalise_freq(alias))
    sin, cos = _angle((grid.month - 1) // 3, 4)
    np.testing.assert_allclose(features, np.stack([sin, cos], axis=1), atol=1e-6)


def test_quarterly_features_of_october_quarters():
    grid = pd.date_range("2001-10-01", periods=4, freq="QS-OCT")  # Oct, Jan, Apr, Jul
    features = calendar_features(grid, normalise_freq("QS-OCT"))
    np.testing.assert_allclose(features, [[-1, 0], [0, 1], [1, 0], [0, -1]], atol=1e-6)


def test_calendar_features_of_weekly_data_are_the_iso_week():
    grid = pd.date_range("2001-01-07", periods=60, freq="W-SUN")
    features = calendar_features(grid, normalise_freq("W-SUN"))
    assert features.shape == (60, 2)
    sin, cos = _angle(grid.isocalendar().week.to_numpy().astype(float) - 1, 52.18)
    np.testing.assert_allclose(features, np.stack([sin, cos], axis=1), atol=1e-6)


@pytest.mark.parametrize("alias", ["D", "B", "C"])
def test_calendar_features_of_daily_data_are_weekday_and_day_of_year(alias):
    grid = pd.date_range("2001-01-01", periods=400, freq=alias)  # 2001-01-01 is a Monday
    features = calendar_features(grid, normalise_freq(alias))
    assert features.shape == (400, 4)
    week_sin, week_cos = _angle(grid.dayofweek, 7)
    year_sin, year_cos = _angle(grid.dayofyear - 1, 365.25)
    np.testing.assert_allclose(features, np.stack([week_sin, week_cos, year_sin, year_cos], axis=1), atol=1e-6)
    np.testing.assert_allclose(features[0], [0, 1, 0, 1], atol=1e-6)


@pytest.mark.parametrize("alias", ["h", "2h", "30min", "15min", "min", "s", "bh", "cbh"])
def test_calendar_features_of_sub_daily_data_are_time_of_day_and_weekday(alias):
    grid = pd.date_range("2001-01-01", periods=50, freq=alias)
    features = calendar_features(grid, normalise_freq(alias))
    assert features.shape == (50, 4)
    day_sin, day_cos = _angle(grid.hour * 60 + grid.minute, 1440)
    week_sin, week_cos = _angle(grid.dayofweek, 7)
    np.testing.assert_allclose(features, np.stack([day_sin, day_cos, week_sin, week_cos], axis=1), atol=1e-6)


def test_six_in_the_morning_is_a_quarter_of_the_daily_circle():
    grid = pd.DatetimeIndex(["2001-01-01 06:00", "2001-01-01 12:00", "2001-01-03 18:00"])
    features = calendar_features(grid, normalise_freq("h"))
    np.testing.assert_allclose(features[:, :2], [[1, 0], [0, -1], [-1, 0]], atol=1e-6)


@pytest.mark.parametrize("alias", ["YS", "YE", "BYS", "WOM-1MON"])
def test_yearly_and_unknown_frequencies_have_no_calendar_features(alias):
    grid = pd.date_range("2001-01-01", periods=5, freq=alias)
    features = calendar_features(grid, normalise_freq(alias))
    assert features.shape == (5, 0) and features.dtype == np.float32


@pytest.mark.parametrize("alias", ["YE-JUN", "YS-JUL", "YE-MAR", "QE-NOV", "QS-NOV", "QE-JAN", "W-WED"])
def test_every_anchor_of_a_frequency_spans_its_year_alike(alias):
    """Counted from 1 January, a fiscal year ending in June spanned half a year: such panels lost the trend line and
    the shipped prior (with a warning blaming a trend_line=False nobody passed)."""
    from forecaster.data.frequency import season_spans_a_year

    offset = normalise_freq(alias)
    assert season_spans_a_year(offset, season_length_for(offset))


def test_fiscal_years_forecast_as_calendar_years_do():
    from forecaster import Seq2SeqForecaster

    rng = np.random.default_rng(0)
    values = {f"s{i}": 100 + 3 * np.arange(30) + rng.normal(0, 1, 30) for i in range(4)}
    forecasts = []
    for freq, start in [("YE-DEC", "1980-12-31"), ("YE-JUN", "1980-06-30")]:
        ds = pd.date_range(start, periods=30, freq=freq)
        df = pd.concat([pd.DataFrame({"unique_id": uid, "ds": ds, "y": y}) for uid, y in values.items()])
        model = Seq2SeqForecaster(4, progress=False).fit(df)
        assert model.fit_plan_.units["trend_line"] and model.fit_plan_.start == "prior"
        forecasts.append(model.predict()["y_hat"].to_numpy())
    np.testing.assert_allclose(forecasts[0], forecasts[1])


def test_a_frequency_that_cannot_be_inferred_is_named_by_the_users_time_column():
    """With time_col="day" the error said "Could not infer the frequency of `ds`", a column the frame does not have."""
    from conftest import fast_model

    days = pd.to_datetime(["2024-01-01", "2024-01-02", "2024-01-05", "2024-01-09", "2024-01-10"])
    df = pd.DataFrame({"sku": "a", "day": days, "units": [1.0, 2.0, 3.0, 4.0, 5.0]})
    model = fast_model(horizon=2, id_col="sku", time_col="day", target_col="units")
    with pytest.raises(ValueError, match=r"Could not infer the frequency of `day`"):
        model.fit(df)
