"""Messages that name the real problem: data at another frequency than the model's, histories shorter than the window."""

import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import fast_model

from forecaster.datasets import make_panel


@pytest.fixture(scope="module")
def monthly():
    df, _ = make_panel(n_series=4, length=40, seed=0, static=False, short_share=0.0, missing_share=0.0)
    return df[["unique_id", "ds", "y"]]


@pytest.fixture(scope="module")
def monthly_model(monthly):
    return fast_model(horizon=4, max_steps=5).fit(monthly)


def _quarterly(df: pd.DataFrame) -> pd.DataFrame:
    return df[df["ds"].dt.month.isin([1, 4, 7, 10])].reset_index(drop=True)


def _message(call) -> str:
    with pytest.raises(ValueError) as raised:
        call()
    return str(raised.value)


def test_quarterly_data_for_a_monthly_model_is_named_as_such_not_as_gaps(monthly, monthly_model):
    message = _message(lambda: monthly_model.predict(df=_quarterly(monthly)))  # on the MS grid, every third month
    assert "the data looks quarterly ('QS-OCT', e.g. series 'S000') but the model's frequency is 'MS'" in message
    assert "fit the model with freq='QS-OCT' (in a study spec: freq = 'QS-OCT' under [data]) or resample" in message
    assert "fill_gaps" not in message
    quarter_ends = _quarterly(monthly).assign(ds=lambda f: f["ds"] + pd.offsets.QuarterEnd(0))  # off the MS grid
    message = _message(lambda: monthly_model.predict(df=quarter_ends))
    assert "looks quarterly ('QE-DEC'" in message and "'MS'" in message and "not on the" not in message
    message = _message(lambda: fast_model(horizon=2, freq="MS").fit(_quarterly(monthly)))
    assert "looks quarterly ('QS-OCT'" in message


def test_a_frequency_mismatch_is_refused_even_when_gaps_may_be_filled(monthly):
    model = fast_model(horizon=4, max_steps=5, fill_gaps=True).fit(monthly)
    assert "looks quarterly" in _message(lambda: model.predict(df=_quarterly(monthly)))


def test_every_step_a_multiple_of_the_period_is_a_frequency_mismatch_even_when_pandas_cannot_name_it(monthly, monthly_model):
    quarterly = _quarterly(monthly)
    patchy = quarterly.drop(index=quarterly.groupby("unique_id").head(3).index[1::3])  # a quarter missing per series
    message = _message(lambda: monthly_model.predict(df=patchy))
    assert "spaced '3MS' apart" in message and "fit the model with freq='3MS'" in message


def test_monthly_data_for_a_quarterly_model_and_real_gaps_keep_their_own_messages(monthly, monthly_model):
    quarterly_model = fast_model(horizon=2, input_size=8, max_steps=5).fit(_quarterly(monthly))
    message = _message(lambda: quarterly_model.predict(df=monthly))
    assert "looks monthly ('MS'" in message and "model's frequency is 'QS-OCT'" in message
    gappy = monthly.drop(index=[10, 11])
    message = _message(lambda: monthly_model.predict(df=gappy))
    assert "have gaps" in message and "fill_gaps=True" in message and "looks" not in message


def _short_warnings(call) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [str(w.message) for w in caught if issubclass(w.category, UserWarning) and "input_size" in str(w.message)]


def test_a_history_shorter_than_the_window_warns_once_per_fit_and_predict(monthly):
    starts = monthly.groupby("unique_id")["ds"].transform("min")
    late = np.where(monthly["unique_id"].isin(["S001", "S002"]), starts + pd.DateOffset(months=31), starts)
    short = monthly[monthly["ds"] >= late]  # S001 and S002 keep 9 months, input_size 12
    model = fast_model(horizon=4, max_steps=5)
    (fitted,) = _short_warnings(lambda: model.fit(short))
    assert "2 of 4 series have less history than input_size=12 periods (shortest: 9" in fitted
    assert "'S001'" in fitted and "padded" in fitted
    (predicted,) = _short_warnings(lambda: model.predict(df=short))
    assert predicted == fitted
    assert _short_warnings(lambda: model.predict(df=monthly)) == []
    # The fit's own history was named by the fit: predict and explain of it say nothing again (they did, every call).
    assert _short_warnings(model.predict) == [] and _short_warnings(model.explain) == []


def _weekly(anchor: str = "W-SUN", n_series: int = 3, weeks: int = 60) -> pd.DataFrame:
    ds = pd.date_range("2021-01-03", periods=weeks, freq=anchor)
    rng = np.random.default_rng(0)
    return pd.concat(
        [pd.DataFrame({"unique_id": f"w{i}", "ds": ds, "y": 50 + rng.normal(0, 5, weeks)}) for i in range(n_series)],
        ignore_index=True,
    )


def test_a_period_column_is_refused_with_a_fix_that_works_and_keeps_the_weekday():
    """Periods were refused with a pd.to_datetime fix that raises TypeError on them; pandas' own to_timestamp() dates
    a week ending on Sunday on its Monday."""
    weekly = _weekly()
    periods = weekly.assign(ds=weekly["ds"].dt.to_period("W-SUN"))
    message = _message(lambda: fast_model(horizon=4).fit(periods))
    assert "holds pandas periods (period[W-SUN])" in message and "to_timestamp(how='end').dt.normalize()" in message
    fixed = periods.assign(ds=periods["ds"].dt.to_timestamp(how="end").dt.normalize())
    pd.testing.assert_series_equal(fixed["ds"], weekly["ds"])  # the fix it gives puts every week back on its Sunday


def test_mixed_weekday_anchors_are_not_told_to_pass_freq():
    """One series on Mondays, the others on Sundays: "Pass `freq`" led to a second error, not a fix."""
    mixed = pd.concat([_weekly(n_series=2), _weekly("W-MON", 1).assign(unique_id="monday")], ignore_index=True)
    message = _message(lambda: fast_model(horizon=4).fit(mixed))
    assert "Mixed frequencies" in message and "same weekday" in message and "Pass `freq` or split" not in message


def test_a_week_of_another_weekday_names_what_w_means_and_a_fix_for_a_spec():
    monday = _weekly("W-MON")
    message = _message(lambda: fast_model(horizon=4, freq="W").fit(monday))
    assert "'W-SUN' ('W' means weeks ending on Sunday)" in message and "freq = 'W-MON' under [data]" in message


def test_a_spec_reads_iso_weeks_as_their_mondays_and_says_how():
    """'%G-W%V' failed with pandas' message and a doubled period; the hint named no format for weeks."""
    from forecaster.evaluation.studies import SpecError, parse_dates

    read = parse_dates(pd.Series(["2020-W01", "2020-W02", "2020-W53"]), "%G-W%V", "`week`")
    assert list(read) == list(pd.to_datetime(["2019-12-30", "2020-01-06", "2020-12-28"]))  # each week's Monday
    with pytest.raises(SpecError) as raised:
        parse_dates(pd.Series(["2020-W01", "2020/W02"]), "%G-W%V", "`week`")
    message = str(raised.value)
    assert "'%G-W%V'" in message and '"2020/W02"' in message and ".." not in message and "You might" not in message
    with pytest.raises(SpecError, match=r'"%G-W%V" for ISO weeks such as 2020-W01 \(each dated on its Monday\)'):
        parse_dates(pd.Series(["2020-W01", "2020-W02"]), None, "`week`")


def test_backtests_without_a_refit_still_name_a_series_the_fit_never_saw():
    """Forecasts of folds the fit did not see name their short series (one starting after the first cutoff): counted
    over the panel's 61 series, not only in the occlusion check's sample of 50."""
    from forecaster import backtest

    many, _ = make_panel(n_series=60, length=40, seed=0, static=False, short_share=0.0, missing_share=0.0)
    many = many[["unique_id", "ds", "y"]]
    late = many[many["unique_id"] == "S000"].tail(18).assign(unique_id="late")
    df = pd.concat([many, late], ignore_index=True)
    model = fast_model(horizon=6, input_size=24, max_steps=3)
    messages = _short_warnings(lambda: backtest(model, df, n_windows=3, refit=False, baselines=(), progress=False))
    assert any("'late'" in m and "of 61 series" in m for m in messages)


def test_a_loaded_model_names_its_kept_short_series_once_and_plots_of_the_own_history_do_not(monthly, tmp_path):
    from forecaster import Seq2SeqForecaster
    from forecaster.plots import plot_attention

    starts = monthly.groupby("unique_id")["ds"].transform("min")
    short = monthly[monthly["ds"] >= np.where(monthly["unique_id"] == "S001", starts + pd.DateOffset(months=31), starts)]
    model = fast_model(horizon=4, max_steps=3)
    assert len(_short_warnings(lambda: model.fit(short))) == 1
    assert _short_warnings(lambda: plot_attention(model, unique_id="S001")) == []
    model.save(tmp_path / "m")
    loaded = Seq2SeqForecaster.load(tmp_path / "m")
    assert len(_short_warnings(loaded.predict)) == 1  # a new process has not seen the fit's warning
    assert _short_warnings(loaded.predict) == [] and _short_warnings(loaded.explain) == []


def test_hourly_periods_are_dated_by_their_start_and_w_is_explained_only_for_sundays():
    hours = pd.DataFrame({"unique_id": "a", "ds": pd.period_range("2024-01-01", periods=60, freq="h"), "y": 1.0})
    message = _message(lambda: fast_model(horizon=4).fit(hours))
    assert "Date each period by its start" in message and "normalize" not in message
    message = _message(lambda: fast_model(horizon=4, freq="W-MON").fit(_weekly("W-SUN")))
    assert "'W' means" not in message and "freq = 'W-SUN' under [data]" in message


def test_integer_ids_are_named_as_the_data_writes_them(monthly):
    """With numpy 2, an id read from an int64 column printed as ``np.int64(6)``: "Series [6] have gaps ...; the first
    missing timestamp is ... in series np.int64(6)."."""
    numbered = monthly.assign(unique_id=monthly["unique_id"].factorize()[0] + 6)
    gapped = numbered.drop(numbered.index[(numbered["unique_id"] == 6)][5])
    gap = _message(lambda: fast_model(horizon=4, freq="MS").fit(gapped))
    assert "in series 6." in gap and "np." not in gap
    model = fast_model(horizon=4, max_steps=2, future_covariates=["promo"]).fit(numbered.assign(promo=0.0))
    last = numbered["ds"].max()
    future = pd.DataFrame({"unique_id": [6, 7, 8, 9], "ds": last + pd.DateOffset(months=1), "promo": 0.0})
    lacks = _message(lambda: model.predict(future_df=future))
    assert "of series 6 at" in lacks and "np." not in lacks


def _local_hours(start: str, end: str, series: str = "ab") -> pd.DataFrame:
    """Hourly rows in Berlin's clock time, written without a zone (as many exports are)."""
    local = pd.date_range(start, end, freq="h", tz="Europe/Berlin").tz_localize(None)
    return pd.concat(
        [pd.DataFrame({"unique_id": s, "ds": local, "y": np.arange(len(local), dtype=float)}) for s in series],
        ignore_index=True,
    )


def test_clock_times_across_a_daylight_saving_change_are_named_as_such():
    """Naive local hours across a change read as a gap (spring) or as duplicate rows (autumn), and the messages said
    only that."""
    spring = _local_hours("2024-03-25", "2024-04-05")
    inferred = _message(lambda: fast_model(horizon=24).fit(spring))
    assert "early morning of 2024-03-31: local clock times without a zone skip an hour" in inferred
    gap = _message(lambda: fast_model(horizon=24, freq="h").fit(spring))
    assert "the first missing timestamp is 2024-03-31 02:00:00" in gap and "skip an hour" in gap
    assert "df['ds'] = df['ds'].dt.tz_localize('Europe/Berlin')" in gap
    autumn = _local_hours("2024-10-20", "2024-11-01")
    repeated = _message(lambda: fast_model(horizon=24).fit(autumn))
    assert "one early-morning hour of 2024-10-27: local clock times without a zone repeat that hour" in repeated
    # The fix the message gives works.
    end = "ambiguous='infer'))"
    hint = repeated[repeated.index("df['ds'] = ") : repeated.index(end) + len(end)]
    exec(hint, {"df": autumn})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast_model(horizon=24, max_steps=2).fit(autumn)
    # Other duplicates and gaps say nothing of clocks.
    twice = pd.concat([spring.iloc[:5], spring], ignore_index=True)
    assert "clock" not in _message(lambda: fast_model(horizon=24, freq="h").fit(twice.sort_values(["unique_id", "ds"])))
    midday = spring[spring["ds"] != pd.Timestamp("2024-03-27 12:00")]
    assert "clock" not in _message(lambda: fast_model(horizon=24, freq="h").fit(midday))


@pytest.mark.parametrize("freq", ["W-SUN", "D", "MS"])
def test_daily_and_coarser_gaps_and_duplicates_say_nothing_of_clock_changes(freq):
    """A missing or repeated week, day or month dated at midnight in a month of clock changes was explained as an hour
    skipped or repeated by daylight-saving time, with advice (give `ds` a zone) that cannot mend it."""
    dates = pd.date_range("2023-08-01" if freq == "D" else "2023-01-01", periods=40, freq=freq)
    df = pd.concat([pd.DataFrame({"unique_id": s, "ds": dates, "y": np.arange(40.0)}) for s in "ab"], ignore_index=True)
    change = dates[(dates.month == 9) | (dates.month == 10)][0]
    gap = df[~((df["unique_id"] == "a") & (df["ds"] == change))]
    twice = pd.concat([df, df[(df["unique_id"] == "a") & (df["ds"] == change)]], ignore_index=True)
    for frame, said in ((gap, "gaps"), (twice, "duplicate")):
        message = _message(lambda frame=frame: fast_model(horizon=4, freq=freq).fit(frame))
        assert said in message and "clock" not in message and "tz_localize" not in message
    inferred = _message(lambda: fast_model(horizon=4).fit(gap[gap["unique_id"] == "a"]))  # no freq: not inferred
    assert "clock" not in inferred


def test_a_frequency_not_inferred_on_zoned_hours_shows_the_datas_own_times():
    """Zoned sub-daily data is read in UTC: the message listed 14:00 for a series whose first row is 09:00-05:00."""
    from forecaster import backtest

    # 20:00 in Chicago is 02:00 UTC: a missing early-morning hour of March, as the fit reads it, but no clock change.
    hours = pd.date_range("2024-03-04 19:00", periods=60, freq="h", tz="America/Chicago").delete([1])
    df = pd.DataFrame({"unique_id": "a", "ds": hours, "y": np.arange(len(hours), dtype=float)})
    for call in (lambda: fast_model(horizon=6).fit(df), lambda: backtest(fast_model(horizon=6), df, progress=False)):
        message = _message(call)
        assert "series 'a': 2024-03-04 19:00:00-06:00, 2024-03-04 21:00:00-06:00" in message
        assert "clock" not in message  # zoned times: no hour skipped by a clock change


def test_an_infinite_future_known_covariate_is_not_told_to_become_nan():
    """The advice "a finite value or NaN" led to the next error: future-known covariates must be complete."""
    df, _ = make_panel(n_series=3, length=30, seed=0, static=False)
    df = df[["unique_id", "ds", "y", "promo", "traffic"]].reset_index(drop=True)
    bad = df.copy()
    bad.loc[5, "promo"] = np.inf
    message = _message(lambda: fast_model(horizon=4, future_covariates=["promo"]).fit(bad))
    assert "replace it with a finite value." in message and "NaN" not in message
    past = df.copy()
    past.loc[5, "traffic"] = np.inf
    message = _message(lambda: fast_model(horizon=4, past_covariates=["traffic"]).fit(past))
    assert "replace it with a finite value or NaN." in message
    model = fast_model(horizon=4, max_steps=2, future_covariates=["promo"]).fit(df)
    future = pd.DataFrame({"unique_id": ["S000"], "ds": [df["ds"].max() + pd.DateOffset(months=1)], "promo": [np.inf]})
    assert "NaN" not in _message(lambda: model.predict(future_df=future))


def test_future_dates_off_the_models_calendar_say_what_to_change():
    """Mondays for a Sunday model were answered "fit the model with freq='W-MON' or resample the data", and midnight
    for a model dated 23:59 named a Sunday as off a Sunday grid without the time of day."""
    ds = pd.date_range("2022-01-02", periods=60, freq="W-SUN")
    df = pd.concat([pd.DataFrame({"unique_id": s, "ds": ds, "y": np.arange(60.0) + i, "price": 1.0}) for i, s in enumerate("ab")])

    def future(start, freq):
        return pd.concat(
            [pd.DataFrame({"unique_id": s, "ds": pd.date_range(start, periods=4, freq=freq), "price": 1.0}) for s in "ab"]
        )

    model = fast_model(horizon=4, max_steps=2, future_covariates=["price"]).fit(df)
    mondays = _message(lambda: model.predict(future_df=future(ds[-1] + pd.Timedelta(days=1), "W-MON")))
    assert "date its rows on the model's calendar" in mondays and "fit the model with" not in mondays
    late = fast_model(horizon=4, max_steps=2, future_covariates=["price"]).fit(df.assign(ds=df["ds"] + pd.Timedelta("23h59min")))
    midnight = _message(lambda: late.predict(future_df=future(ds[-1] + pd.Timedelta(days=7), "W-SUN")))
    assert "(the grid's times are at 23:59:00, this one is at 00:00:00)" in midnight


def test_an_hourly_future_off_the_grid_names_no_time_of_day():
    """The time-of-day note belongs to daily and coarser grids: an hourly grid has every time of day."""
    hours = pd.date_range("2024-01-01", periods=72, freq="h")
    df = pd.concat([pd.DataFrame({"unique_id": s, "ds": hours, "y": np.arange(72.0), "promo": 0.0}) for s in "ab"])
    model = fast_model(horizon=4, max_steps=2, future_covariates=["promo"]).fit(df)
    future = pd.concat(
        [
            pd.DataFrame(
                {"unique_id": s, "ds": hours[-1] + pd.Timedelta("30min") + pd.Timedelta("1h") * np.arange(4), "promo": 0.0}
            )
            for s in "ab"
        ]
    )
    message = _message(lambda: model.predict(future_df=future))
    assert "is not on the 'h' grid" in message and "the grid's times" not in message
