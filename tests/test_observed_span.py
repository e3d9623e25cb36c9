"""Every series is read from its first to its last observed target, and every window the verdict leaves out is listed.

A file's empty leading or trailing rows (a series recorded late, a wide table melted to long form) must not change
a forecast, a baseline or a score; a series that ends early is forecast from its own last observation, with a
warning naming it; a backtest window that cannot be scored is in ``skipped`` with its reason.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import fast_model

from forecaster import backtest
from forecaster.datasets import make_panel


def _panel() -> pd.DataFrame:
    df, _ = make_panel(n_series=6, length=48, seed=3, short_share=0.0, missing_share=0.0)
    return df[["unique_id", "ds", "y"]]


def _with_empty_rows(df: pd.DataFrame, late: str, early: str, lead: int = 18, trail: int = 5) -> pd.DataFrame:
    """``df`` with ``lead`` empty rows before series ``late`` and ``trail`` after series ``early``'s last row."""
    spans = df.groupby("unique_id")["ds"].agg(["min", "max"])
    before = pd.date_range(end=spans.loc[late, "min"], periods=lead + 1, freq="MS")[:-1]
    after = pd.date_range(start=spans.loc[early, "max"], periods=trail + 1, freq="MS")[1:]
    empty = pd.concat(
        [pd.DataFrame({"unique_id": late, "ds": before}), pd.DataFrame({"unique_id": early, "ds": after})], ignore_index=True
    ).assign(y=np.nan)
    return pd.concat([df, empty], ignore_index=True).sample(frac=1.0, random_state=0)  # any row order


def _ended_early(df: pd.DataFrame, uid: str, periods: int) -> pd.DataFrame:
    """``df`` with series ``uid``'s last ``periods`` targets emptied (its rows still run to the end)."""
    out = df.copy()
    rows = out.index[out["unique_id"] == uid][-periods:]
    out.loc[rows, "y"] = np.nan
    return out


def test_empty_leading_and_trailing_rows_change_no_forecast_and_no_score():
    df = _panel()
    ids = sorted(df["unique_id"].unique())
    padded = _with_empty_rows(df, late=ids[0], early=ids[1])
    before = padded.copy()
    kwargs = dict(n_windows=2, progress=False)
    clean = backtest(fast_model(), df, **kwargs)
    with pytest.warns(UserWarning, match=repr(ids[1])):
        noisy = backtest(fast_model(), padded, **kwargs)
    pd.testing.assert_frame_equal(padded, before)  # the caller's frame is not touched
    keys = ["unique_id", "cutoff", "model"]
    a = clean.metrics.sort_values(keys).reset_index(drop=True)
    b = noisy.metrics.sort_values(keys).reset_index(drop=True)
    pd.testing.assert_frame_equal(a[keys], b[keys])
    baselines = a["model"] != "seq2seq"
    np.testing.assert_array_equal(a.loc[baselines, "mase"], b.loc[baselines, "mase"])  # baselines exactly
    np.testing.assert_allclose(a["mase"], b["mase"], rtol=1e-2)  # the model within 1%
    pd.testing.assert_frame_equal(clean.skipped, noisy.skipped)


def test_a_series_that_ends_early_is_scored_from_its_own_cutoffs_not_left_out():
    df = _panel()
    uid = sorted(df["unique_id"].unique())[2]
    gone = _ended_early(df, uid, periods=8)
    own_end = gone.loc[(gone["unique_id"] == uid) & gone["y"].notna(), "ds"].max()
    with pytest.warns(UserWarning, match="rows after the last observed `y` hold no target in 1 series"):
        result = backtest(fast_model(), gone, n_windows=2, progress=False)
    scored = result.metrics[(result.metrics["unique_id"] == uid) & (result.metrics["model"] == "seq2seq")]
    assert len(scored) == 2 and np.isfinite(scored["mase"]).all()
    assert scored["cutoff"].max() == own_end - pd.DateOffset(months=6)
    assert result.settings["verdict"]["series"] == df["unique_id"].nunique()


def test_fit_and_predict_forecast_a_series_that_ends_early_from_its_last_observation():
    df = _panel()
    uid = sorted(df["unique_id"].unique())[1]
    gone = _ended_early(df, uid, periods=4)
    own_end = gone.loc[(gone["unique_id"] == uid) & gone["y"].notna(), "ds"].max()
    model = fast_model()
    with pytest.warns(UserWarning, match=rf"'{uid}' at {own_end.date()}"):
        model.fit(gone)
    forecast = model.predict()
    dates = forecast.loc[forecast["unique_id"] == uid, "ds"]
    assert dates.min() == own_end + pd.DateOffset(months=1)
    assert len(dates) == 6 and forecast["y_hat"].notna().all()
    with warnings.catch_warnings():  # a panel whose series all end at their last row says nothing
        warnings.simplefilter("error")
        fast_model().fit(df)


def test_windows_the_verdict_cannot_score_are_listed_with_their_reason():
    df = _panel()
    ids = sorted(df["unique_id"].unique())
    out = df.copy()
    flat = out["unique_id"] == ids[0]
    out.loc[flat, "y"] = 7.0  # a constant history: zero MASE scale in every fold
    gap = out.index[out["unique_id"] == ids[1]][-6:]
    out.loc[gap[:-1], "y"] = np.nan  # the last fold's horizon of this series: one observed target, its last
    out.loc[out.index[out["unique_id"] == ids[1]][-12:-6], "y"] = np.nan  # the first fold's horizon: none observed
    result = backtest(fast_model(), out, n_windows=2, progress=False)
    reasons = result.skipped.set_index(["unique_id", "fold"])["reason"]
    assert reasons.loc[(ids[0], 1)].startswith("MASE undefined: the history up to the cutoff never changes")
    assert reasons.loc[(ids[0], 2)].startswith("MASE undefined")
    assert reasons.loc[(ids[1], 1)].startswith("no observed target in the fold's horizon")
    assert (ids[1], 2) not in reasons.index  # one observed target is scored
    verdict = result.settings["verdict"]
    assert verdict["series"] == len(ids) - 1 and verdict["windows"] == verdict["windows_total"] - 3
    assert verdict["points"] == 6 * (len(ids) - 2) * 2 + 1


def test_the_report_opens_with_what_the_verdict_covers(tmp_path):
    df = _panel()
    out = df.copy()
    out.loc[out["unique_id"] == sorted(df["unique_id"].unique())[0], "y"] = 3.0
    result = backtest(fast_model(), out, n_windows=2, progress=False)
    result.to_report(tmp_path)
    text = (tmp_path / "report.md").read_text(encoding="utf-8")
    head = "\n".join(text.splitlines()[:6])
    assert "averaged over 5 of 6 series and 60 of 72 forecast points" in head
    assert "The verdict scores 10 of 12 series-fold windows; 2 series-fold windows left out, each listed" in head
    assert head.count("60 of 72") == 1  # said once
    skipped = pd.read_csv(tmp_path / "skipped.csv")
    assert len(skipped) == 2 and skipped["reason"].str.startswith("MASE undefined").all()


def test_the_verdicts_totals_count_the_windows_skipped_before_forecasting():
    df = _panel()
    first = sorted(df["unique_id"].unique())[0]
    end = df["ds"].max()
    short = df[(df["unique_id"] != first) | (df["ds"] >= end - pd.DateOffset(months=17))]  # 18 periods: one fold only
    result = backtest(fast_model(), short, n_windows=2, progress=False)
    assert len(result.skipped) == 1 and result.skipped["reason"].iloc[0].startswith("only")
    from forecaster.evaluation.report import verdict_line

    assert verdict_line(result.settings["verdict"], result.skipped).endswith(
        "; 1 series-fold window left out, listed with its reason in skipped.csv."
    )
    assert result.settings["verdict"] == {
        "early_series": 0,
        "series": 6,
        "series_total": 6,
        "windows": 11,
        "windows_total": 12,
        "points": 66,
        "points_total": 72,
    }


def _zoned_hours() -> tuple[pd.DatetimeIndex, pd.DataFrame]:
    """Five days of hours in New York (UTC-5) and two series 'a' and 'b' on them."""
    hours = pd.date_range("2021-03-01", periods=120, freq="h", tz="America/New_York")
    rng = np.random.default_rng(0)
    frames = [pd.DataFrame({"unique_id": uid, "ds": hours, "y": 50 + rng.normal(0, 5, len(hours))}) for uid in "ab"]
    return hours, pd.concat(frames, ignore_index=True)


def test_messages_about_a_zoned_panel_name_its_own_times():
    hours, df = _zoned_hours()
    df.loc[df["unique_id"] == "a", "y"] = 7.0  # zero MASE scale: a window in skipped.csv
    df.loc[df.index[df["unique_id"] == "b"][-5:], "y"] = np.nan  # ends five hours early
    last = hours[-6]
    with pytest.warns(UserWarning, match=f"'b' at {last}"):
        result = backtest(fast_model(horizon=6, input_size=24), df, n_windows=1, season_length=24, progress=False)
    reason = result.skipped.loc[result.skipped["unique_id"] == "a", "reason"].iloc[0]
    cutoff = hours[-1] - 6 * pd.Timedelta(hours=1)
    assert reason.endswith(f"(cutoff {cutoff})") and result.settings["cutoffs"][0].endswith(str(cutoff))


MONTHS = pd.date_range("2015-01-01", periods=48, freq="MS")


def _seasonal_pair() -> pd.DataFrame:
    t = np.arange(48)
    y = 100 + 20 * np.sin(2 * np.pi * t / 12) + t
    one = pd.DataFrame({"unique_id": "a", "ds": MONTHS, "y": y})
    return pd.concat([one, one.assign(unique_id="b", y=one["y"] * 2)], ignore_index=True)


def _seasonal_panel(n: int, promo: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    wave = 50 + 10 * np.sin(2 * np.pi * np.arange(48) / 12)
    frames = [pd.DataFrame({"unique_id": f"s{i}", "ds": MONTHS, "y": wave + rng.normal(0, 2, 48)}) for i in range(n)]
    if promo:
        frames = [f.assign(promo=rng.integers(0, 2, 48).astype(float)) for f in frames]
    return pd.concat(frames, ignore_index=True)


def _gappy_model():
    return fast_model(max_steps=5, fill_gaps=True)


def test_a_gap_of_absent_rows_reaches_the_baselines_as_the_same_gap_of_missing_targets():
    """With ``fill_gaps=True`` the rows of a gap could be absent: statsforecast read the rows either side as consecutive,
    so seasonal naive forecast a season out of phase and AutoETS scored MASE 1.578 against 0.156."""
    df = _seasonal_pair()
    gap = (df["unique_id"] == "a") & df["ds"].between("2017-09-01", "2017-11-01")
    settings = dict(n_windows=1, baselines=("seasonal_naive", "auto_ets", "mstl"), progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        missing = backtest(_gappy_model(), df.assign(y=df["y"].mask(gap)), **settings)
        absent = backtest(_gappy_model(), df[~gap].reset_index(drop=True), **settings)
    pd.testing.assert_frame_equal(absent.forecasts, missing.forecasts)
    pd.testing.assert_frame_equal(absent.metrics, missing.metrics)


def test_a_cutoff_in_a_gap_of_absent_rows_scores_every_model_on_the_same_periods():
    """The baselines forecast from the last row before the gap, two periods early, and were scored on three periods
    of the fold's six while the model was scored on five, with nothing in ``skipped``."""
    df = _seasonal_pair()
    gone = (df["unique_id"] == "a") & df["ds"].between("2017-11-01", "2018-01-01")  # the first fold's cutoff: 2017-12
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        baselines = ("seasonal_naive", "auto_ets")
        result = backtest(_gappy_model(), df[~gone], n_windows=2, refit=False, baselines=baselines, progress=False)
    points = result.metrics.groupby(["unique_id", "cutoff"]).n_points.nunique()
    assert (points == 1).all()
    assert result.forecasts[["seq2seq", "seasonal_naive", "auto_ets"]].notna().all().all()


def test_a_series_of_a_few_rows_far_apart_is_forecast_as_with_its_gap_of_missing_targets():
    """One early reading, then nothing for 31 months: counted in calendar periods the series was long enough, while
    statsforecast got its few rows and stopped the backtest ("tiny datasets", non-finite seasonal naive)."""
    df = _seasonal_panel(3)
    gone = (df["unique_id"] == "s0") & df["ds"].between("2015-02-01", "2017-08-01")
    settings = dict(n_windows=2, baselines=("seasonal_naive", "auto_ets"), progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        absent = backtest(_gappy_model(), df[~gone], **settings)
        missing = backtest(_gappy_model(), df.assign(y=df["y"].mask(gone)), **settings)
    pd.testing.assert_frame_equal(absent.metrics, missing.metrics)


def test_rows_after_a_series_ends_need_no_covariates():
    """A wide table melted to long form: a series that ended has rows with neither a target nor its covariates. They
    are no history, yet their missing future-known covariate was refused before they were cut."""
    df = _seasonal_panel(3, promo=True)
    late = (df["unique_id"] == "s2") & (df["ds"] > "2017-12-01")
    padded = df.assign(y=df["y"].mask(late), promo=df["promo"].mask(late))
    settings = dict(n_windows=2, baselines=("seasonal_naive",), progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trimmed = backtest(fast_model(max_steps=5, future_covariates=["promo"]), df[~late], **settings)
        ended = backtest(fast_model(max_steps=5, future_covariates=["promo"]), padded, **settings)
    pd.testing.assert_frame_equal(ended.metrics, trimmed.metrics)


def test_a_future_frame_for_the_panels_next_days_says_a_series_that_ended_early_starts_its_horizon_earlier():
    """A discontinued product (its rows run on without sales) is forecast from its own last sale: a ``future_df`` of
    the panel's next days was refused for lacking its covariates at a date 40 days back, with no word of why."""
    df = _seasonal_panel(3, promo=True)
    ended = (df["unique_id"] == "s2") & (df["ds"] > "2017-08-01")
    history = df.assign(y=df["y"].mask(ended))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = fast_model(max_steps=3, future_covariates=["promo"]).fit(history)
    ahead = pd.date_range("2019-01-01", periods=6, freq="MS")
    future = pd.concat([pd.DataFrame({"unique_id": f"s{i}", "ds": ahead, "promo": 0.0}) for i in range(3)])
    with pytest.raises(ValueError, match=r"series 's2' at 2017-09-01 .* Its history ends at 2017-08-01, before the latest"):
        model.predict(future_df=future)


def test_the_ended_early_warning_points_at_the_callers_line_and_says_where_a_horizon_belongs():
    """It pointed inside the package (estimator.py) on some paths, and a user who appended the horizon's rows with their
    known covariates to `df` was not told that they belong in `future_df`."""
    df = _panel()
    uid = sorted(df["unique_id"].unique())[2]
    gone = _ended_early(df, uid, periods=8)
    with pytest.warns(UserWarning, match="a horizon's known covariates belong in `future_df`") as caught:
        fast_model().fit(gone)
    assert {w.filename for w in caught if "rows after the last observed" in str(w.message)} == {__file__}


def test_the_ragged_cutoffs_and_a_missing_known_covariate_are_named_at_the_datas_own_times():
    """Both named naive UTC times on zoned hourly data (cutoff 2021-03-05 17:00:00 for 12:00-05:00)."""
    import warnings

    hours, df = _zoned_hours()
    df.loc[df.index[df["unique_id"] == "b"][-5:], "y"] = np.nan  # ends five hours early
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        backtest(fast_model(horizon=6, input_size=24), df, n_windows=1, season_length=24, progress=False)
    (ragged,) = [str(w.message) for w in caught if "Series end at different times" in str(w.message)]
    assert f"cutoff {hours[-12]}" in ragged and f"up to {hours[-7]}" in ragged  # -05:00, as the data writes them
    flagged = df.assign(promo=1.0)
    flagged.loc[flagged.index[3], "promo"] = np.nan
    with pytest.raises(ValueError, match=f"`promo` is missing at series 'a' at {hours[3]}"):
        fast_model(horizon=6, future_covariates=["promo"]).fit(flagged)


def test_a_gap_found_by_a_fit_is_named_at_the_datas_own_time():
    """The fit named the first missing hour of zoned data in naive UTC (15:00 for 10:00-05:00), with no zone note."""
    hours, df = _zoned_hours()
    gapped = df.drop(index=10)  # series 'a' loses an hour; 'b' keeps the frequency readable
    with pytest.raises(ValueError, match=f"the first missing timestamp is {hours[10]} in series 'a'"):
        fast_model(horizon=6, input_size=24).fit(gapped)


@pytest.mark.parametrize("refit", [True, False])
def test_a_fold_whose_cutoff_falls_in_a_run_of_missing_targets_fits_as_fit_does(refit):
    """The in-process backtest fitted such a fold on the rows after the series' last observation too, which ``fit``
    (and the Dask backtest) drop: another model, forecasts up to 0.37 apart for every series."""
    df, _ = make_panel(n_series=5, length=48, seed=1, missing_share=0.0)
    cutoff = pd.Timestamp("2003-06-01") if refit else pd.Timestamp("2002-12-01")  # the fold whose fit is checked
    gap = (df["unique_id"] == "S001") & df["ds"].between(cutoff - pd.DateOffset(months=1), cutoff)
    df = df.assign(y=df["y"].mask(gap))
    params = dict(horizon=6, input_size=12, max_steps=20, init="scratch", future_covariates=["promo"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = backtest(fast_model(**params), df, n_windows=2, baselines=("seasonal_naive",), refit=refit, progress=False)
        fold = result.forecasts[result.forecasts["cutoff"] == cutoff]
        train, ahead = df[df["ds"] <= cutoff], df[(df["ds"] > cutoff) & (df["ds"] <= cutoff + pd.DateOffset(months=6))]
        model = fast_model(**params).fit(train)  # S001 ends before the cutoff: forecast here for the others only
        rest = (train["unique_id"] != "S001", ahead["unique_id"] != "S001")
        alone = model.predict(df=train[rest[0]], future_df=ahead.loc[rest[1], ["unique_id", "ds", "promo"]])
    others = fold[fold["unique_id"] != "S001"].merge(alone, on=["unique_id", "ds"])
    assert len(others) == 4 * 6
    np.testing.assert_allclose(others["seq2seq"], others["y_hat"], rtol=0, atol=1e-9)


def test_the_ragged_cutoffs_warning_names_a_series_with_its_own_cutoff():
    """The example series was the first of the early ones, named with the fold's earliest cutoff (another series')."""
    import warnings

    df, _ = make_panel(n_series=5, length=48, seed=1, missing_share=0.0, static=False)
    df = df[["unique_id", "ds", "y"]]
    ends = {"S001": 2, "S002": 5}  # S001 ends 2 months early, S002 five: the earliest cutoff is S002's
    for uid, months in ends.items():
        df = df[~((df["unique_id"] == uid) & (df.groupby("unique_id").cumcount(ascending=False) < months))]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = backtest(fast_model(horizon=6, max_steps=2), df, n_windows=1, baselines=("seasonal_naive",), progress=False)
    (ragged,) = [str(w.message) for w in caught if "Series end at different times" in str(w.message)]
    own = result.forecasts.groupby("unique_id")["cutoff"].first()["S002"]
    assert f"'S002', cutoff {own.date()}" in ragged
    from forecaster.evaluation.report_text import verdict_line  # the report says it too, not only the console

    assert "2 series end before the others and are scored from their own ends" in verdict_line(
        result.settings["verdict"], result.skipped
    )
