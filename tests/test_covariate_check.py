"""A fit with future-known covariates on a panel the prior serves reads them only where the prior's errors follow them."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import future_frame

from forecaster import Seq2SeqForecaster
from forecaster.datasets import make_panel
from forecaster.model.covariate_check import correlation_t, unused_note
from forecaster.model.plan import FitPlan


def quarterly_panel(effect: float, n: int = 12, seed: int = 3) -> pd.DataFrame:
    """``n`` quarterly series with a 0/1 ``promo`` that lifts the target by ``effect`` times the level (0: none)."""
    df, _ = make_panel(n_series=n, length=60, freq="QS", seed=seed, static=False, future_effect=effect, noise=0.03)
    return df[["unique_id", "ds", "y", "promo"]]


def fit_quietly(model: Seq2SeqForecaster, df: pd.DataFrame) -> tuple[Seq2SeqForecaster, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(df)
    return model, [str(w.message) for w in caught]


def random_flag(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with ``promo`` replaced by a random 0/1 flag (seed 0), which carries nothing."""
    return df.assign(promo=np.random.default_rng(0).integers(0, 2, len(df)).astype(float))


def test_a_covariate_that_carries_nothing_leaves_the_prior_as_it_forecasts_without_it():
    """Before the check a declared covariate took init='auto' off the prior: a random flag cost the suite's small and
    short panels 9.7% MASE. Now the prior wins the held-out check and forecasts exactly as without the flag."""
    df = quarterly_panel(effect=0.0)
    flagged = random_flag(df)
    model, messages = fit_quietly(Seq2SeqForecaster(horizon=4, future_covariates=["promo"], progress=False), flagged)
    plan = model.fit_plan_
    assert model.init_ == "pretrained" and plan.prior_check and not plan.covariates_read
    check = plan.check
    assert check["covariates_read"] == 0.0 and check["n_series"] >= 2 and check["t"] < check["bar"]
    assert any("['promo'] are not read" in m and "|t|" in m for m in messages)
    assert all(not result.train_loss for result in model.train_results_)  # the prior as it is: not one step
    bare = Seq2SeqForecaster(horizon=4, progress=False).fit(df.drop(columns="promo"))
    future = future_frame(flagged, 4, freq="QS", value=1.0)
    mine, theirs = model.predict(future_df=future), bare.predict()
    np.testing.assert_allclose(mine["y_hat"], theirs["y_hat"], rtol=1e-6)
    np.testing.assert_allclose(mine["y_hat_q90"], theirs["y_hat_q90"], rtol=1e-6)
    assert model.state_.calibration.blend == bare.state_.calibration.blend  # chosen as a fit without covariates


def test_a_covariate_that_moves_the_target_is_read_from_scratch():
    df = quarterly_panel(effect=1.0)
    model, messages = fit_quietly(Seq2SeqForecaster(horizon=4, future_covariates=["promo"], progress=False), df)
    plan = model.fit_plan_
    assert model.init_ == "scratch" and plan.prior_check and plan.covariates_read
    assert plan.check["covariates_read"] == 1.0 and plan.check["t"] > plan.check["bar"] > 0
    assert not any("are not read" in m for m in messages)
    assert all(len(result.train_loss) > 0 for result in model.train_results_)


@pytest.mark.parametrize("options", [{"max_steps": 30}, {"init": "scratch"}, {"init": "pretrained", "max_steps": 3}])
def test_no_check_where_the_user_chose_the_start_or_the_budget(options):
    df = quarterly_panel(effect=0.0)
    model, messages = fit_quietly(Seq2SeqForecaster(horizon=4, future_covariates=["promo"], progress=False, **options), df)
    assert not model.fit_plan_.prior_check and model.fit_plan_.check is None and model.fit_plan_.covariates_read
    assert not any("are not read" in m for m in messages)


def test_no_check_where_the_prior_would_not_serve_the_panel_without_covariates():
    weekly, _ = make_panel(n_series=6, length=80, freq="W", seed=2, static=False)
    model = Seq2SeqForecaster(horizon=4, future_covariates=["promo"], max_steps=None, hidden_size=16, progress=False)
    plan = model.set_params(max_steps=None)
    model, _ = fit_quietly(plan, weekly[["unique_id", "ds", "y", "promo"]])
    plan = model.fit_plan_  # screened on the history instead (``model.covariate_screen``), and read
    assert model.init_ == "scratch" and not plan.prior_check and plan.screen and plan.covariates_read


def test_the_check_is_saved_with_the_model_and_old_plans_load_without_it(tmp_path):
    df = random_flag(quarterly_panel(effect=0.0))
    model, _ = fit_quietly(Seq2SeqForecaster(horizon=4, future_covariates=["promo"], progress=False), df)
    model.save(tmp_path / "model")
    loaded = Seq2SeqForecaster.load(tmp_path / "model")
    assert loaded.fit_plan_.check == model.fit_plan_.check and not loaded.fit_plan_.covariates_read
    future = future_frame(df, 4, freq="QS")
    pd.testing.assert_frame_equal(loaded.predict(future_df=future), model.predict(future_df=future))
    old = {k: v for k, v in model.fit_plan_.to_dict().items() if k not in ("prior_check", "covariates_read", "check")}
    restored = FitPlan.from_dict(old)
    assert restored.covariates_read and not restored.prior_check and restored.check is None


def test_at_horizon_one_a_promotion_that_doubles_sales_is_read():
    """One held-out window of one step per series left no slope to read: the prior was kept whatever the covariate."""
    model, messages = fit_quietly(Seq2SeqForecaster(horizon=1, future_covariates=["promo"], progress=False), quarterly_panel(1.0))
    assert model.fit_plan_.covariates_read and model.init_ == "scratch" and model.fit_plan_.check["n_series"] >= 2


def test_a_kept_prior_forecasts_a_constant_series_as_the_prior_without_covariates_does():
    df = random_flag(quarterly_panel(effect=0.0))
    df.loc[df["unique_id"] == df["unique_id"].iloc[0], "y"] = 5.0
    model, _ = fit_quietly(Seq2SeqForecaster(horizon=4, future_covariates=["promo"], progress=False), df)
    assert not model.fit_plan_.covariates_read
    forecast = model.predict(future_df=future_frame(df, 4, freq="QS", value=1.0))
    constant = forecast[forecast["unique_id"] == df["unique_id"].iloc[0]].drop(columns=["unique_id", "ds"])
    assert (constant.to_numpy() == 5.0).all()


def test_the_note_says_when_closures_learnt_from_an_unread_covariate_still_apply():
    check = {"t": 0.4, "bar": 2.4, "prior_error": 0.8, "n_series": 12.0, "n_windows": 144.0, "covariates_read": 0.0}
    plain = unused_note(check, ["promo"])
    assert "['promo'] are not read" in plain and "144 held-out windows" in plain and "closures" not in plain
    assert "closed_when_: {'shut': [1.0]}" in unused_note(check, ["promo", "shut"], {"shut": [1.0]})


def test_the_correlation_does_not_depend_on_the_errors_scale():
    rng = np.random.default_rng(0)
    series = np.repeat(np.arange(12), 12)
    covariate = rng.integers(0, 2, (len(series), 6)).astype(float)
    errors = rng.normal(size=covariate.shape) + 0.8 * covariate
    t, n = correlation_t(errors, covariate, series)
    assert n == 12 and t > 3
    for factor in (1e-7, 1e7):
        assert correlation_t(errors * factor, covariate, series) == pytest.approx((t, n))
