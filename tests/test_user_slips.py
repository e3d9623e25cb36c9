"""Slips a user plausibly makes get a clear answer: an error naming what is wrong, or a warning, never silence."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import fast_model, future_frame

from forecaster import backtest
from forecaster.data.seen_values import UnseenValueWarning
from forecaster.datasets import make_panel

QUIET = dict(n_windows=2, baselines=("seasonal_naive",), progress=False)


@pytest.fixture(scope="module")
def panel3() -> pd.DataFrame:
    df, _ = make_panel(n_series=3, length=40, seed=2, short_share=0.0, missing_share=0.0)
    return df


def test_a_covariate_in_both_frames_of_a_backtest_is_refused(panel3):
    """The frame given apart used to be ignored where ``df`` held the column: forecasts made with the actual values
    were scored as if made with the forecast ones."""
    model = fast_model(future_covariates=["promo"])
    planned = panel3[["unique_id", "ds"]].assign(promo=1.0 - panel3["promo"])
    with pytest.raises(ValueError, match=r"`promo` are columns of both `df` and `future_covariates_df`"):
        backtest(model, panel3, future_covariates_df=planned, **QUIET)
    apart = backtest(model, panel3.drop(columns="promo"), future_covariates_df=planned, **QUIET).forecasts
    together = backtest(model, panel3, **QUIET).forecasts
    assert not np.allclose(apart["seq2seq"], together["seq2seq"])  # the planned values are the ones read


def test_a_backtest_of_categorical_ids_and_statics_with_a_series_that_starts_late(panel3):
    """A fold's frame kept the category of a series with no rows yet, and encoding the statics failed inside pandas."""
    late = panel3[(panel3["unique_id"] != "S002") | (panel3["ds"] >= "2002-10-01")]
    late = late.assign(unique_id=late["unique_id"].astype("category"), group=late["group"].astype("category"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # pandas' observed=False deprecation, once per fit
        result = backtest(fast_model(static_covariates=["group"]), late, **QUIET)
    assert set(result.skipped["unique_id"]) == {"S002"} and len(result.skipped) == 2
    assert set(result.forecasts["unique_id"].astype(str)) == {"S000", "S001"}


def test_a_frequency_without_an_alias_and_monthly_dates_within_the_month_are_explained(panel3):
    with pytest.raises(ValueError, match=r"`freq`=<DateOffset: months=1> has no pandas offset alias; give one such as 'MS'"):
        fast_model(freq=pd.DateOffset(months=1)).fit(panel3)
    mid_month = panel3.assign(ds=panel3["ds"] + pd.Timedelta(days=14))
    with pytest.raises(ValueError, match=r"no series is spaced as pandas can name \(gaps or irregular dates; series 'S000'"):
        fast_model().fit(mid_month)
    one_month_missing = mid_month[mid_month["ds"] != "2001-06-15"]
    with pytest.raises(ValueError, match=r"Monthly dates on day 15 have no pandas alias: .*to_period\('M'\)"):
        fast_model().fit(one_month_missing)
    assert fast_model(freq=pd.offsets.MonthBegin()).fit(panel3).predict()["y_hat"].notna().all()


def test_an_undeclared_column_of_future_df_is_named():
    """A covariate given for the horizon but never declared changed nothing, without a word."""
    df, _ = make_panel(n_series=3, length=40, seed=2, short_share=0.0, missing_share=0.0, static=False)
    future = future_frame(df, 6, value=1.0)
    model = fast_model().fit(df.drop(columns="promo"))
    with pytest.warns(UserWarning, match=r"`future_df` columns `promo` are not declared future-known covariates") as caught:
        model.predict(future_df=future)
    assert caught[0].filename == __file__
    declared = fast_model(future_covariates=["promo"]).fit(df)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        declared.predict(future_df=future)


def test_static_labels_that_match_fitted_ones_only_up_to_case_or_spaces_are_named(panel3):
    """Relabelled categories ('A' given as 'a') were read as new kinds of series, all zeros, without a word. A new
    series of a new kind still gets no category, with its own warning (since 0.17.6)."""
    model = fast_model(static_covariates=["group"]).fit(panel3)
    renamed = panel3.assign(group=panel3["group"].str.lower())
    pattern = r"Static covariate `group` holds values that match categories it was fitted with only up to case or spaces"
    with pytest.warns(UserWarning, match=pattern) as caught:
        forecast = model.predict(df=renamed)
    assert "'a' (fitted: 'A')" in str(caught[0].message) and "3 series" in str(caught[0].message)
    assert caught[0].filename == __file__  # the caller's line, not the library's
    assert forecast["y_hat"].notna().all()
    newcomer = panel3[panel3["unique_id"] == "S000"].assign(unique_id="NEW", group="Z")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        model.predict(df=panel3)
    with pytest.warns(UnseenValueWarning, match=r"categories the fit never saw \(\['Z'\]") as caught:
        model.predict(df=pd.concat([panel3, newcomer]))
    assert not any("up to case or spaces" in str(w.message) for w in caught)


def test_ids_that_match_only_as_text_are_named_with_their_dtypes(panel3):
    numbered = panel3.assign(unique_id=panel3["unique_id"].str[1:].astype(int))
    model = fast_model(future_covariates=["promo"]).fit(numbered)
    future = future_frame(numbered, 6).assign(unique_id=lambda f: f["unique_id"].astype(str))
    with pytest.raises(ValueError, match=r"`future_df` has `unique_id` values of dtype object and the history of dtype int64"):
        model.predict(future_df=future)
    # Ids that match by value pass: an object column of Python ints against int64, as the join reads them.
    as_objects = numbered[["unique_id", "ds", "promo"]].astype({"unique_id": object})
    unfitted = fast_model(future_covariates=["promo"])
    kept = backtest(unfitted, numbered.drop(columns="promo"), future_covariates_df=as_objects, **QUIET).forecasts
    assert set(kept["unique_id"]) == {0, 1, 2}
    covariates = numbered[["unique_id", "ds", "promo"]].astype({"unique_id": str})
    with pytest.raises(ValueError, match=r"`future_covariates_df` has `unique_id` values of dtype object"):
        backtest(model, numbered.drop(columns="promo"), future_covariates_df=covariates, **QUIET)


def test_a_static_given_another_value_in_future_df_is_named(panel3):
    """A static in `future_df` is not read (statics come from the history): a changed category was ignored silently."""
    model = fast_model(static_covariates=["group"], future_covariates=["promo"]).fit(panel3)
    future = future_frame(panel3, 6)
    groups = panel3.drop_duplicates("unique_id").set_index("unique_id")["group"]
    same = future.assign(group=future["unique_id"].map(groups))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        expected = model.predict(future_df=same)  # the whole frame passed along: nothing to say
    changed = same.assign(group=np.where(same["unique_id"] == "S000", "Z", same["group"]))
    with pytest.warns(UserWarning, match=r"`group` is a static covariate.*1 series such as \['S000'\] \('Z' against 'A'\)"):
        forecast = model.predict(future_df=changed)
    pd.testing.assert_frame_equal(forecast, expected)
