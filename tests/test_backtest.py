import re
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import fast_model
from pandas.tseries.offsets import CustomBusinessDay

from forecaster import LeakageError, backtest
from forecaster.data.frequency import normalise_freq
from forecaster.data.roles import CovariateRoles
from forecaster.data.validation import Columns
from forecaster.datasets import make_panel
from forecaster.evaluation.folds import fold_data, guard_fold, rolling_origins


@pytest.fixture(scope="module")
def data():
    df, _ = make_panel(n_series=6, length=40, seed=2, short_share=0.0, missing_share=0.0)
    return df


@pytest.fixture(scope="module")
def result(data):
    model = fast_model(future_covariates=["promo"], past_covariates=["traffic"])
    return backtest(model, data, n_windows=2, progress=False)


def test_cutoffs_are_spaced_and_end_one_horizon_before_the_series_end():
    ends = pd.Series(pd.to_datetime(["2003-12-01", "2003-10-01"]), index=["a", "b"])
    starts = pd.Series(pd.to_datetime(["2000-01-01", "2003-01-01"]), index=["a", "b"])
    folds = rolling_origins(ends, starts, normalise_freq("MS"), 6, 3, 2, 7)
    assert [str(f.cutoffs["a"].date()) for f in folds] == ["2003-02-01", "2003-04-01", "2003-06-01"]
    assert all("b" not in f.cutoffs for f in folds) and all("b" in f.skipped for f in folds)
    assert folds[-1].horizon_ends["a"] == ends["a"]


def test_a_sliding_window_never_holds_fewer_periods_than_a_fold_needs():
    ends = pd.Series(pd.to_datetime(["2003-12-01", "2003-12-01"]), index=["long", "late"])
    starts = pd.Series(pd.to_datetime(["2000-01-01", "2002-03-01"]), index=["long", "late"])
    folds = rolling_origins(ends, starts, normalise_freq("MS"), 6, 3, 3, 12, sliding=True)
    assert "late" in folds[0].skipped and "late" in folds[1].cutoffs  # 10 periods up to the first cutoff, 13 to the second
    for fold in folds[1:]:
        held = len(pd.date_range(fold.history_starts["late"], fold.cutoffs["late"], freq="MS"))
        assert held == 12  # not the 10 the first fold had
    first = len(pd.date_range(folds[0].history_starts["long"], folds[0].cutoffs["long"], freq="MS"))
    assert all(len(pd.date_range(f.history_starts["long"], f.cutoffs["long"], freq="MS")) == first for f in folds)


def _late_series_with_a_gap(length: int, start: int, gap: tuple[int, int]) -> pd.DataFrame:
    """Three monthly series from 2000-01 of ``length`` months; ``s2`` starts at month ``start`` (0 is 2000-01) and
    misses its targets in months ``gap`` (first and last, inclusive)."""
    rng = np.random.default_rng(0)
    t = np.arange(length)
    months = pd.date_range("2000-01-01", periods=length, freq="MS")
    df = pd.concat(
        [pd.DataFrame({"unique_id": f"s{i}", "ds": months, "y": 100 + 5 * np.sin(t) + rng.random(length)}) for i in range(3)],
        ignore_index=True,
    )
    position = (df["ds"].dt.year - 2000) * 12 + df["ds"].dt.month - 1
    late = df["unique_id"] == "s2"
    df.loc[late & position.between(*gap), "y"] = np.nan
    return df[~(late & (position < start))].reset_index(drop=True)


def test_a_sliding_window_that_starts_in_a_gap_reaches_back_to_an_observed_target():
    """A late series whose sliding window began inside a run of missing targets left the baselines fewer periods than
    they need: the whole backtest ended in "Baseline 'seasonal_naive' produced non-finite forecasts for series ['s2']"."""
    df = _late_series_with_a_gap(48, start=29, gap=(30, 36))  # s2 from 2002-06, missing 2002-07 to 2003-01
    result = backtest(fast_model(), df, n_windows=3, window="sliding", baselines=("seasonal_naive",), progress=False)
    scored = result.forecasts.dropna(subset=["y"])
    assert np.isfinite(scored[["seq2seq", "seasonal_naive"]].to_numpy()).all()
    skipped = set(result.skipped.loc[result.skipped["unique_id"] == "s2", "fold"])
    assert 1 in skipped and len(skipped) < 3  # too short for the first fold, and said so; scored in a later one
    assert scored.loc[scored["unique_id"] == "s2", "cutoff"].nunique() == 3 - len(skipped)


def test_a_sliding_window_inside_a_gap_up_to_its_cutoff_reaches_back_too():
    """A window whose gap ran to its cutoff held no observed target: seasonal naive was NaN there and silently left
    unscored."""
    df = _late_series_with_a_gap(60, start=29, gap=(41, 53))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the network's window holds nothing there: warned, and scored in WQL only
        result = backtest(fast_model(), df, n_windows=3, window="sliding", baselines=("seasonal_naive",), progress=False)
    assert np.isfinite(result.forecasts["seasonal_naive"]).all()


@pytest.mark.parametrize("refit", [True, False])
def test_a_series_with_fewer_observed_values_than_a_horizon_up_to_a_cutoff_is_still_scored(refit):
    """Fitted over its observed span, such a series left the fold's fit refusing the whole backtest ("shorter than one
    horizon"): it gives no training window, so it is left out of the fit and still forecast and scored."""
    df = _late_series_with_a_gap(60, start=30, gap=(34, 47))  # 4 observed months, then a gap past fold 1's cutoff
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = backtest(fast_model(max_steps=2), df, n_windows=3, refit=refit, baselines=("seasonal_naive",), progress=False)
    scored = result.forecasts[result.forecasts["unique_id"] == "s2"]
    assert scored["cutoff"].nunique() == 3 and np.isfinite(scored["seq2seq"]).all()


def test_a_sliding_backtest_scores_a_series_too_short_for_its_first_fold():
    df, _ = make_panel(n_series=4, length=40, seed=3, short_share=0.0, missing_share=0.0)
    late = df[df["unique_id"] == "S000"].tail(26)  # 8 periods up to the first cutoff, 14 to the second
    df = pd.concat([df[df["unique_id"] != "S000"], late])
    result = backtest(fast_model(), df, n_windows=3, refit=False, window="sliding", baselines=("seasonal_naive",), progress=False)
    # numbered as every other table of the backtest numbers its folds: 1 the earliest origin
    assert set(result.skipped.loc[result.skipped["unique_id"] == "S000", "fold"]) == {1}
    assert result.calibration(by="fold").index.get_level_values("fold").min() == 1
    scored = result.forecasts[result.forecasts["unique_id"] == "S000"]
    assert scored["cutoff"].nunique() == 2 and np.isfinite(scored[["seq2seq", "seasonal_naive"]].to_numpy()).all()


def test_result_frames_and_summary(result, data):
    f = result.forecasts
    assert {"unique_id", "cutoff", "ds", "y", "seq2seq", "seq2seq_q10", "seq2seq_q90", "seasonal_naive", "auto_ets"} <= set(
        f.columns
    )
    assert f["cutoff"].nunique() == 2 and len(f) == 2 * 6 * 6
    assert (f["ds"] > f["cutoff"]).all()
    assert np.isfinite(f[["seq2seq", "seasonal_naive", "auto_ets"]].to_numpy()).all()
    assert set(result.metrics["model"]) == {"seq2seq", "seasonal_naive", "auto_ets"}
    summary = result.summary()
    assert {"mean_mase", "median_mase", "rel_mase_vs_auto_ets", "win_rate", "coverage", "fit_seconds"} <= set(summary.columns)
    assert summary.loc["auto_ets", "rel_mase_vs_auto_ets"] == pytest.approx(1.0)


@pytest.mark.parametrize(
    "roles",
    [
        {"future_covariates": ["promo"], "past_covariates": ["traffic"]},
        {"past_covariates": ["traffic"]},  # no future-known covariates: the statistical blend is on
    ],
)
@pytest.mark.parametrize("refit", [True, False])
def test_rewriting_targets_after_each_cutoff_leaves_every_fold_unchanged(data, roles, refit):
    """Without refits every fold is forecast from one panel of the whole frame: still nothing after a cutoff counts."""
    model = fast_model(**roles)
    base = backtest(model, data, n_windows=2, refit=refit, progress=False)
    cols = ["seq2seq", "seq2seq_q10", "seq2seq_q90", "seasonal_naive", "auto_ets"]
    for cutoff in base.forecasts["cutoff"].unique():
        changed = data.copy()
        later = changed["ds"] > cutoff
        changed.loc[later, "y"] = changed.loc[later, "y"] * -3 + 1000
        changed.loc[later, "traffic"] = 99.0
        moved = backtest(model, changed, n_windows=2, refit=refit, progress=False)
        fold = base.forecasts["cutoff"] == cutoff
        assert fold.sum() == 36
        pd.testing.assert_frame_equal(base.forecasts.loc[fold, cols], moved.forecasts.loc[fold, cols])


def test_future_covariate_inside_the_horizon_changes_that_folds_forecast(data):
    model = fast_model(future_covariates=["promo"])
    base = backtest(model, data, n_windows=1, baselines=(), progress=False)
    cutoff = base.forecasts["cutoff"].iloc[0]
    changed = data.copy()
    inside = changed["ds"] > cutoff
    changed.loc[inside, "promo"] = 1.0 - changed.loc[inside, "promo"]
    moved = backtest(model, changed, n_windows=1, baselines=(), progress=False)
    assert not np.allclose(base.forecasts["seq2seq"], moved.forecasts["seq2seq"])


def test_model_fitted_past_the_first_cutoff_is_refused(data):
    model = fast_model().fit(data)
    with pytest.raises(LeakageError, match="past the first cutoff"):
        backtest(model, data, n_windows=2, progress=False)


def test_guard_refuses_late_training_rows(data):
    roles = CovariateRoles(future=("promo",))
    grouped = data.groupby("unique_id")["ds"]
    fold = rolling_origins(grouped.max(), grouped.min(), normalise_freq("MS"), 6, 1, 6, 7)[0]
    train, future = fold_data(data, fold, Columns(), roles)
    guard_fold(train, future, fold, Columns(), roles)
    with pytest.raises(LeakageError, match="after its cutoff"):
        guard_fold(data, future, fold, Columns(), roles)
    with pytest.raises(LeakageError, match="carries"):
        guard_fold(train, future.assign(y=1.0), fold, Columns(), roles)


def test_refit_false_scores_all_origins_with_one_fit(data, monkeypatch):
    from forecaster import Seq2SeqForecaster

    fits, fit_frame = [], Seq2SeqForecaster.fit_frame

    def counted(self, *args, **kwargs):
        fits.append(1)
        return fit_frame(self, *args, **kwargs)

    monkeypatch.setattr(Seq2SeqForecaster, "fit_frame", counted)
    model = fast_model()
    result = backtest(model, data, n_windows=3, refit=False, window="sliding", baselines=("seasonal_naive",), progress=False)
    assert len(fits) == 1
    cutoffs = sorted(result.forecasts["cutoff"].unique())
    assert len(cutoffs) == 3
    # Each fold: the one model forecasting from that cutoff's sliding window (as many periods as the first fold's).
    first = data[data["ds"] <= cutoffs[0]].groupby("unique_id").size()
    for cutoff in cutoffs:
        upto = data[data["ds"] <= cutoff]
        from_end = upto.groupby("unique_id").cumcount(ascending=False)
        history = upto[from_end < upto["unique_id"].map(first)]
        result.last_model._cache = None
        expected = result.last_model.predict(df=history).set_index(["unique_id", "ds"])["y_hat"]
        got = result.forecasts[result.forecasts["cutoff"] == cutoff].set_index(["unique_id", "ds"])["seq2seq"]
        np.testing.assert_allclose(got.reindex(expected.index), expected, rtol=1e-9)


def test_short_series_are_skipped_with_a_reason():
    df, _ = make_panel(n_series=4, length=40, seed=3, short_share=0.0, missing_share=0.0)
    short = df[df["unique_id"] == "S000"].tail(8)
    df = pd.concat([df[df["unique_id"] != "S000"], short])
    result = backtest(fast_model(), df, n_windows=2, baselines=("seasonal_naive",), progress=False)
    assert "S000" in set(result.skipped["unique_id"]) and "S000" not in set(result.forecasts["unique_id"])
    assert result.skipped["reason"].str.contains("periods up to cutoff").all()


def test_too_many_windows_for_every_series_is_refused_before_any_fit(data):
    refused = r"`n_windows`=8 with `step_size`=6 .* the longest series has \d+ periods, so at most \d fit\. Lower `n_windows`"
    with pytest.raises(ValueError, match=refused):
        backtest(fast_model(), data, n_windows=8, baselines=(), progress=False)


def test_a_timestamp_off_the_calendar_is_refused_before_any_fold_is_cut(data):
    stray = data.copy()
    last = stray["ds"].max()
    stray.loc[(stray["unique_id"] == "S001") & (stray["ds"] == last), "ds"] = last + pd.Timedelta(days=14)
    with pytest.raises(ValueError, match=r"timestamp 2003-04-15 of series 'S001' is not on the 'MS' grid"):
        backtest(fast_model(), stray, n_windows=2, baselines=(), progress=False)


def test_leading_rows_without_a_target_do_not_count_as_history():
    df, _ = make_panel(n_series=4, length=40, seed=1, short_share=0.0, missing_share=0.0, static=False)
    df.loc[(df["unique_id"] == "S001") & (df["ds"] <= "2001-10-01"), "y"] = np.nan  # observed from 2001-11 only
    result = backtest(fast_model(), df, n_windows=2, baselines=("seasonal_naive",), progress=False)
    reason = result.skipped.loc[result.skipped["unique_id"] == "S001", "reason"]
    assert len(reason) == 1 and "only 6 periods up to cutoff 2002-04-01 from its first observed target" in reason.iloc[0]
    later = result.forecasts[result.forecasts["unique_id"] == "S001"]
    assert later["cutoff"].nunique() == 1 and np.isfinite(later[["seq2seq", "seasonal_naive"]].to_numpy()).all()


def test_covariates_given_apart_are_checked_before_they_are_joined(data):
    model = fast_model(future_covariates=["promo"])
    history, covariates = data.drop(columns=["promo"]), data[["unique_id", "ds", "promo"]]
    together = backtest(model, data, n_windows=1, baselines=(), progress=False)
    as_text = history.assign(ds=history["ds"].dt.strftime("%Y-%m-%d"))
    apart = backtest(model, as_text, future_covariates_df=covariates, n_windows=1, baselines=(), progress=False)
    pd.testing.assert_frame_equal(apart.forecasts, together.forecasts)
    with pytest.raises(ValueError, match=r"`future_covariates_df` has duplicate \(unique_id, ds\) rows, first at series 'S000'"):
        backtest(model, history, future_covariates_df=pd.concat([covariates, covariates.iloc[:1]]), n_windows=1, progress=False)
    with pytest.raises(ValueError, match=r"`future_covariates_df` is missing column\(s\) `ds`"):
        backtest(model, history, future_covariates_df=covariates.rename(columns={"ds": "date"}), n_windows=1, progress=False)
    with pytest.raises(ValueError, match=r"Future-known covariate `promo` is missing at series 'S000'"):
        backtest(model, history, future_covariates_df=covariates.iloc[1:], n_windows=1, baselines=(), progress=False)
    # The target or a past-only covariate in a frame of values known ahead is refused, as in predict's future_df.
    for leaked in ("y", "traffic"):
        with pytest.raises(LeakageError, match=f"`future_covariates_df` carries `{leaked}`, which is not known in advance"):
            past = fast_model(future_covariates=["promo"], past_covariates=["traffic"])
            backtest(past, history, future_covariates_df=data[["unique_id", "ds", "promo", leaked]], n_windows=1, progress=False)


def test_one_pass_backtest_of_categorical_ids_whose_series_end_apart():
    df, _ = make_panel(n_series=4, length=36, seed=1, short_share=0.0, missing_share=0.0, static=False)
    from_end = df.groupby("unique_id").cumcount(ascending=False)
    df = df[from_end >= df["unique_id"].map({"S000": 0, "S001": 2, "S002": 1, "S003": 3})]  # ends 0-3 months apart
    as_text = backtest(fast_model(), df, n_windows=2, refit=False, baselines=(), progress=False)
    categories = df.assign(unique_id=df["unique_id"].astype("category"))
    categorical = backtest(fast_model(), categories, n_windows=2, refit=False, baselines=(), progress=False)
    assert categorical.forecasts["cutoff"].nunique() > 2  # the series' last cutoffs differ
    got = categorical.forecasts.assign(unique_id=categorical.forecasts["unique_id"].astype(str))
    pd.testing.assert_frame_equal(got, as_text.forecasts)


def test_zoned_and_naive_timestamps_are_not_joined():
    df, _ = make_panel(n_series=3, length=120, freq="h", seed=1, short_share=0.0, missing_share=0.0, static=False)
    df["ds"] = df["ds"].dt.tz_localize("Europe/Berlin")
    history, covariates = df.drop(columns=["promo"]), df[["unique_id", "ds", "promo"]]
    model = fast_model(horizon=6, input_size=24, future_covariates=["promo"])
    together = backtest(model, df, n_windows=1, baselines=(), progress=False)
    elsewhere = covariates.assign(ds=covariates["ds"].dt.tz_convert("America/New_York"))  # the same instants
    apart = backtest(model, history, future_covariates_df=elsewhere, n_windows=1, baselines=(), progress=False)
    pd.testing.assert_frame_equal(apart.forecasts, together.forecasts)
    naive = covariates.assign(ds=covariates["ds"].dt.tz_localize(None))
    with pytest.raises(ValueError, match=r"`df` has time-zone-aware `ds` and `future_covariates_df` naive ones"):
        backtest(model, history, future_covariates_df=naive, n_windows=1, baselines=(), progress=False)


def test_a_backtest_gives_timestamps_back_in_the_callers_zone():
    df, _ = make_panel(n_series=3, length=120, freq="h", seed=1, short_share=0.0, missing_share=0.0, static=False)
    df["ds"] = df["ds"].dt.tz_localize("Europe/Berlin")
    model = fast_model(horizon=6, input_size=24)
    result = backtest(model, df, n_windows=2, baselines=("seasonal_naive",), progress=False)
    forecasts = result.forecasts
    assert str(forecasts["ds"].dt.tz) == str(forecasts["cutoff"].dt.tz) == "Europe/Berlin"
    assert forecasts["ds"].max() == df["ds"].max()  # 23:00+01:00, not 22:00 without a zone
    predicted = fast_model(horizon=6, input_size=24).fit(df[df["ds"] <= df["ds"].max() - pd.Timedelta(hours=6)]).predict()
    last = forecasts[forecasts["cutoff"] == forecasts["cutoff"].max()]
    assert sorted(last["ds"].unique()) == sorted(predicted["ds"].unique())
    assert str(result.metrics["cutoff"].dt.tz) == "Europe/Berlin" and str(result.data["ds"].dt.tz) == "Europe/Berlin"


def test_coverage_scores_every_model_on_the_models_outermost_levels(data):
    result = backtest(fast_model(quantiles=[0.25, 0.5, 0.75]), data, n_windows=1, baselines=("auto_ets",), progress=False)
    f = result.forecasts
    inside = ((f["y"] >= f["auto_ets_q25"]) & (f["y"] <= f["auto_ets_q75"])).groupby(f["unique_id"]).mean().mean()
    wider = ((f["y"] >= f["auto_ets_lo"]) & (f["y"] <= f["auto_ets_hi"])).groupby(f["unique_id"]).mean().mean()  # its 80%
    assert result.summary().loc["auto_ets", "coverage"] == pytest.approx(inside) and inside < wider


@pytest.mark.parametrize("refit", [True, False])
def test_log_target_checks_history_not_the_actuals_of_a_horizon(refit):
    df, _ = make_panel(n_series=4, length=40, seed=1, short_share=0.0, missing_share=0.0, static=False)
    df["y"] = df["y"].abs()
    scored_only = df.copy()
    scored_only.loc[(scored_only["unique_id"] == "S001") & (scored_only["ds"] == "2003-03-01"), "y"] = -1.0  # last horizon
    result = backtest(fast_model(log_target=True), scored_only, n_windows=2, refit=refit, baselines=(), progress=False)
    assert np.isfinite(result.forecasts["seq2seq"]).all()
    history = df.copy()
    history.loc[(history["unique_id"] == "S001") & (history["ds"] == "2002-06-01"), "y"] = -1.0  # the last fold's history
    with pytest.raises(ValueError, match=r"needs non-negative targets, but `y` is -1 for series 'S001' at 2002-06-01"):
        backtest(fast_model(log_target=True), history, n_windows=2, refit=refit, baselines=(), progress=False)


def test_folds_sit_on_a_custom_business_calendar_given_as_an_offset():
    """The cutoffs sit on the calendar of the offset itself: a holiday is no period (its alias "C" would make it one)."""
    holidays = [pd.Timestamp("2024-03-15")]
    offset = CustomBusinessDay(holidays=holidays)
    times = pd.date_range("2024-01-02", periods=60, freq=offset)
    rng = np.random.default_rng(0)
    df = pd.concat(
        [pd.DataFrame({"unique_id": f"s{i}", "ds": times, "y": 10 + rng.normal(0, 1, 60).cumsum() * 0.1}) for i in range(3)]
    )
    expected = {str(times[-1 - 5 - k * 5].date()) for k in range(2)}  # horizon 5, step 5, 2 windows
    for refit in (True, False):
        model = fast_model(horizon=5, input_size=10, freq=offset, season_length=5, max_steps=5, fill_gaps=True)
        result = backtest(model, df, n_windows=2, refit=refit, baselines=("seasonal_naive",), progress=False)
        assert {str(c.date()) for c in result.metrics["cutoff"].unique()} == expected


def test_a_backtest_of_series_that_end_at_different_times_says_what_the_global_model_read():
    """Each series is cut at its own origin: a series that ends six months early was forecast by a network trained on
    the other series' periods after its cutoff (moving those moved its forecast), without a word."""
    df, _ = make_panel(n_series=4, length=48, seed=3, short_share=0.0, missing_share=0.0)
    early = df["unique_id"] == "S001"
    df = df[~(early & (df["ds"] > df["ds"].max() - pd.DateOffset(months=6)))]
    with pytest.warns(UserWarning, match=r"fold 2, 1 series \(e\.g\. 'S001', cutoff 2002-12-01\) is forecast by a model trained"):
        backtest(fast_model(max_steps=3), df, n_windows=2, baselines=(), progress=False)
    aligned = df[df["ds"] <= df[early]["ds"].max()]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        backtest(fast_model(max_steps=3), aligned, n_windows=2, baselines=(), progress=False)


def test_a_baselines_first_call_in_a_process_is_not_timed_as_its_fit(monkeypatch):
    """statsforecast compiles a model on its first call (a second or more): a fresh process's report said seasonal
    naive took 1.6 s to AutoETS's 0.4 s. The first call, simulated here by a pause, is now made untimed."""
    import time

    from forecaster.evaluation import baselines

    real, calls = baselines.run_baselines, []

    def compiling_first(*args, **kwargs):
        if not calls:
            time.sleep(0.5)
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(baselines, "run_baselines", compiling_first)
    monkeypatch.setattr(baselines, "_WARMED", set(), raising=False)  # a fresh process: nothing run yet
    df, _ = make_panel(n_series=3, length=40, short_share=0.0, missing_share=0.0, static=False)
    result = backtest(fast_model(), df[["unique_id", "ds", "y"]], n_windows=1, baselines=("seasonal_naive",))
    assert result.summary().loc["seasonal_naive", "fit_seconds"] < 0.4


def test_a_backtest_says_each_warning_once_at_the_callers_line():
    """Every fold's fit repeated its data's warnings: a backtest of 4 folds printed one of them 8 times, attributed
    to a line inside the package."""
    df, _ = make_panel(n_series=4, length=40, short_share=0.0, missing_share=0.0, static=False)
    df = df[["unique_id", "ds", "y"]]
    short = df[(df["unique_id"] != "S000") | (df["ds"] >= df["ds"].max() - pd.DateOffset(months=14))]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        backtest(fast_model(input_size=18), short, n_windows=3, baselines=())
    shorter = [w for w in caught if "less history than" in str(w.message)]
    assert len(shorter) == 1 and shorter[0].filename == __file__
    assert len({(w.category, str(w.message)) for w in caught}) == len(caught)


def test_a_backtests_season_length_that_the_model_does_not_fit_with_is_said(data):
    """backtest(season_length=4) moved the baselines and the MASE scale while the model fitted with its inferred 12, and
    the report read "season 4" above settings that said 12, without a word."""
    frame = data[["unique_id", "ds", "y"]]
    with pytest.warns(UserWarning, match=r"the model fits with the one its frequency gives, season_length=12"):
        result = backtest(fast_model(), frame, n_windows=1, season_length=4, baselines=("seasonal_naive",), progress=False)
    assert result.last_model.season_length_ == 12  # the model scored is the one fit builds
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        backtest(fast_model(season_length=4), frame, n_windows=1, season_length=4, baselines=("seasonal_naive",), progress=False)


def test_a_baseline_named_twice_is_refused_before_any_fold_runs(data):
    """("auto_ets", "auto_ets") fitted every fold, then failed in scoring with a broadcasting error."""
    with pytest.raises(ValueError, match=r"`baselines` names \['auto_ets'\] more than once"):
        backtest(fast_model(), data, n_windows=1, baselines=("auto_ets", "auto_ets"), progress=False)


@pytest.mark.parametrize("refit", [True, False])
def test_an_absent_row_in_a_folds_horizon_is_refused_naming_the_row_to_add(refit):
    """With fill_gaps=True, a refitted fold failed with a message about a `future_df` never passed, and a one-pass
    backtest forecast the step with the covariate at its training mean, without a word."""
    from forecaster.datasets import make_panel

    df, _ = make_panel(n_series=5, length=48, seed=1, missing_share=0.0)
    absent = df[~((df["unique_id"] == "S002") & (df["ds"] == "2003-02-01"))]
    model = fast_model(horizon=6, input_size=12, max_steps=2, fill_gaps=True, future_covariates=["promo"])
    with pytest.raises(ValueError, match=r"no row for series 'S002' at 2003-02-01, a step of fold 2's horizon.*NaN target"):
        backtest(model, absent, n_windows=3, baselines=("seasonal_naive",), refit=refit, progress=False)
    kept = df.assign(y=df["y"].mask((df["unique_id"] == "S002") & (df["ds"] == "2003-02-01")))  # as the message says
    result = backtest(model, kept, n_windows=3, baselines=("seasonal_naive",), refit=refit, progress=False)
    assert result.forecasts["seq2seq"].notna().all()


def test_an_absent_horizon_row_of_zoned_hours_is_named_at_the_datas_own_time():
    """The message named the absent row in naive UTC (04:00 for 06:00+02:00): a user adding that row added the wrong one."""
    hours = pd.date_range("2024-03-30", periods=80, freq="h", tz="Europe/Berlin")
    df = pd.concat(
        [
            pd.DataFrame({"unique_id": s, "ds": hours, "y": np.arange(80.0) + i, "promo": (np.arange(80) % 5 == 0) * 1.0})
            for i, s in enumerate("ab")
        ]
    )
    df = df[~((df["unique_id"] == "a") & (df["ds"] == hours[-3]))]
    model = fast_model(horizon=6, input_size=12, max_steps=2, fill_gaps=True, future_covariates=["promo"], freq="h")
    with pytest.raises(ValueError, match=re.escape(f"no row for series 'a' at {hours[-3]}")):
        backtest(model, df, n_windows=2, baselines=("seasonal_naive",), progress=False)
