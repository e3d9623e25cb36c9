import numpy as np
import pandas as pd
import pytest
from conftest import fast_model, future_frame
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from forecaster import Seq2SeqForecaster
from forecaster.model.budget import default_max_steps, use_early_stopping
from forecaster.model.outputs import quantile_column


def test_init_stores_parameters_and_clone_round_trips():
    model = Seq2SeqForecaster(horizon=5, future_covariates=("promo",), hidden_size=8)
    params = model.get_params()
    assert params["horizon"] == 5 and params["future_covariates"] == ("promo",)
    twin = clone(model)
    assert twin.get_params() == params
    twin.set_params(hidden_size=4)
    assert twin.hidden_size == 4 and model.hidden_size == 8


def test_predict_before_fit_raises():
    with pytest.raises(NotFittedError):
        fast_model().predict()


def test_fit_returns_self(panel):
    df, _ = panel
    model = fast_model(quantiles=None)
    assert model.fit(df) is model


def test_predict_shape_columns_and_monotone_quantiles(fitted, panel):
    df, _ = panel
    forecast = fitted.predict(future_df=future_frame(df, 6))
    deciles = [f"y_hat_q{10 * k}" for k in range(1, 10)]  # the nine deciles by default
    assert list(forecast.columns) == ["unique_id", "ds", "y_hat", *deciles]
    assert len(forecast) == df["unique_id"].nunique() * 6
    assert np.isfinite(forecast.drop(columns=["unique_id", "ds"]).to_numpy()).all()
    np.testing.assert_array_equal(forecast["y_hat"], forecast["y_hat_q50"])
    assert (np.diff(forecast[deciles].to_numpy(), axis=1) >= 0).all()
    ends = df.groupby("unique_id")["ds"].max()
    first = forecast.groupby("unique_id")["ds"].min()
    assert (first == ends + pd.offsets.MonthBegin(1)).all()


def test_quantile_column_names():
    assert [quantile_column(q) for q in (0.1, 0.5, 0.975, 0.05)] == ["y_hat_q10", "y_hat_q50", "y_hat_q97.5", "y_hat_q5"]


def test_point_forecast_without_quantiles(panel):
    df, _ = panel
    forecast = fast_model(quantiles=None).fit(df).predict()
    assert list(forecast.columns) == ["unique_id", "ds", "y_hat"]


def test_same_seed_same_forecasts_and_other_seed_differs(panel):
    df, _ = panel
    first = fast_model().fit(df).predict()
    second = fast_model().fit(df).predict()
    pd.testing.assert_frame_equal(first, second)
    other = fast_model(random_state=1).fit(df).predict()
    assert not np.allclose(first["y_hat"], other["y_hat"])


def test_additive_lstm_skip_and_observation_value_variants_fit_and_differ_from_the_default(panel):
    df, _ = panel
    default = fast_model().fit(df)
    config = default.network_config_
    assert config.skip and config.values == "states"  # the defaults: states as values, with the skip
    base = default.predict()["y_hat"].to_numpy()
    variants = (
        {"attention": "additive"},
        {"cell": "lstm", "num_layers": 2},
        {"attention_values": "observations"},
        {"linear_skip": False},
    )
    for overrides in variants:
        model = fast_model(**overrides).fit(df)
        forecast = model.predict()["y_hat"].to_numpy()
        assert np.isfinite(forecast).all()
        assert not np.allclose(forecast, base), overrides
    assert not model.network_config_.skip  # the last variant really has no skip


def test_predict_from_new_history_with_unseen_series(fitted, panel):
    df, _ = panel
    original = df[df["unique_id"] == df["unique_id"].iloc[0]]
    new = original.assign(unique_id="NEW")
    forecast = fitted.predict(df=new, future_df=future_frame(new, 6))
    assert set(forecast["unique_id"]) == {"NEW"} and len(forecast) == 6
    # A global model: the same history, covariates and statics under a new id give the same forecast.
    known = fitted.predict(df=original, future_df=future_frame(original, 6))
    np.testing.assert_allclose(forecast["y_hat"].to_numpy(), known["y_hat"].to_numpy(), rtol=1e-12)
    assert (forecast["ds"].to_numpy() == known["ds"].to_numpy()).all()


def test_explain_weights_sum_to_one_and_skip_padding(fitted, panel):
    df, _ = panel
    explanation = fitted.explain(future_df=future_frame(df, 6))
    # The default reads encoder states: its account gives paths, not points (test_state_account.py).
    assert fitted.network_config_.values == "states" and fitted.network_config_.skip
    attention = ["unique_id", "ds", "step", "ds_history", "lag", "weight"]
    account = ["contribution", "step_baseline", "step_covariates", "step_partners", "step_floor", "step_head", "y_hat"]
    account += ["closed_step"]  # not a part: whether a closure made the step zero
    assert list(explanation.columns) == attention + account
    sums = explanation.groupby(["unique_id", "step"])["weight"].sum()
    np.testing.assert_allclose(sums.to_numpy(), 1.0, atol=1e-5)
    assert len(sums) == df["unique_id"].nunique() * 6
    starts = df.groupby("unique_id")["ds"].min()
    assert (explanation["ds_history"] >= explanation["unique_id"].map(starts)).all()
    assert (explanation["ds_history"] < explanation["ds"]).all()


def test_ensemble_members_train_identically_in_worker_processes(panel, tmp_path):
    df, _ = panel
    sequential = fast_model(n_models=2).fit(df)
    parallel = fast_model(n_models=2, n_jobs=2).fit(df)
    pd.testing.assert_frame_equal(sequential.predict(), parallel.predict())
    single = fast_model().fit(df).predict()
    assert not np.allclose(single["y_hat"], sequential.predict()["y_hat"])
    sequential.save(tmp_path / "ensemble")
    loaded = Seq2SeqForecaster.load(tmp_path / "ensemble")
    pd.testing.assert_frame_equal(loaded.predict(), sequential.predict())
    explanation = loaded.explain()
    np.testing.assert_allclose(explanation.groupby(["unique_id", "step"])["weight"].sum(), 1.0, atol=1e-5)


def test_automatic_early_stopping_switches_on_only_for_many_passes_over_few_windows():
    assert use_early_stopping(None, max_steps=300, batch_size=128, n_windows=1_000)  # 38 passes: on
    assert not use_early_stopping(None, max_steps=1500, batch_size=128, n_windows=79_000)  # 2.4 passes: off
    assert use_early_stopping(True, 1500, 128, 79_000) and not use_early_stopping(False, 300, 128, 1_000)


def test_the_step_budget_grows_with_the_panel_past_the_panels_it_was_chosen_on():
    assert default_max_steps(35_712, 128) == 2 * 35_712 // 128  # Tourism quarterly's training part: two passes
    assert default_max_steps(116_154, 128) == 1500  # M3 monthly's: the cap, as when it was chosen
    assert default_max_steps(250_000, 128) == 1500
    assert default_max_steps(10_000_000, 128) == int(1500 * np.sqrt(40))  # 10^5 series of 120 months: 9,486
    assert default_max_steps(10**8, 128) == int(1500 * np.sqrt(400))
    assert default_max_steps(100, 128) == 100  # a small panel: the floor, not 0.3.0's 300 steps
    assert default_max_steps(12_800, 128) == 200


def test_small_panels_get_early_stopping_by_default(panel):
    df, _ = panel
    model = fast_model(max_steps=200).fit(df)  # 200 steps x 32 windows is far more than 6 passes over 8 short series
    assert model.train_result_.val_loss
