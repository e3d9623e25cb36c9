"""The inference core, the fitted state, warm starts and the parameter table."""

import inspect
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import fast_model, future_frame

from forecaster import Seq2SeqForecaster, backtest
from forecaster.datasets import make_panel
from forecaster.model.params import CONSTRAINTS
from forecaster.model.partner_shift import follows_covariates
from forecaster.model.state import FittedState

DATA = Path(__file__).parent / "data"
SEASON = 12


class SeasonalNaiveNetwork(Seq2SeqForecaster):
    """An oracle: a fitted model whose network forecasts exactly the last season again.

    Every weight is zero except the learned bias of the distance "one season before the
    target", which is so large that each step attends to that one observation alone; the
    median is the attended observation itself, so the forecast is the seasonal-naive
    forecast from whatever origin the backtest passes.
    """

    def fit_frame(self, frame, tz, *args, **kwargs):
        panel = super().fit_frame(frame, tz, *args, **kwargs)
        with torch.no_grad():
            for member in self.network_.members:
                for parameter in member.parameters():
                    parameter.zero_()
                member.distance_bias[SEASON - 1] = 60.0  # distance from the target period, less one
        self._cache.clear()  # no pass of the weights before they were set
        return panel


@pytest.fixture(scope="module")
def complete():
    df, _ = make_panel(n_series=6, length=60, seed=4, short_share=0.0, missing_share=0.0)
    late = {"S001": df["ds"].min() + pd.DateOffset(months=16), "S002": df["ds"].min() + pd.DateOffset(months=22)}
    starts = df["unique_id"].map(late).fillna(df["ds"].min())
    return df[df["ds"] >= starts].reset_index(drop=True)  # two series start late: windows with padding


@pytest.mark.parametrize(
    "options",
    [dict(refit=True), dict(refit=False), dict(refit=2), dict(refit=False, window="sliding"), dict(refit=True, step_size=1)],
)
def test_oracle_network_equals_seasonal_naive_at_every_row_of_every_fold(complete, options):
    oracle = SeasonalNaiveNetwork(
        horizon=8,
        input_size=24,
        max_steps=1,
        theta_weight=0.0,
        holt_winters_weight=0.0,
        progress=False,
        attention_values="observations",
    )
    result = backtest(oracle, complete, n_windows=3, baselines=("seasonal_naive",), progress=False, **options)
    forecasts = result.forecasts
    assert forecasts["cutoff"].nunique() == 3 and len(forecasts) == 8 * (3 * 6 - len(result.skipped))
    np.testing.assert_allclose(forecasts["seq2seq"], forecasts["seasonal_naive"], rtol=2e-6)
    by_model = result.metrics.pivot_table(index=["unique_id", "cutoff"], columns="model", values="mase")
    np.testing.assert_allclose(by_model["seq2seq"], by_model["seasonal_naive"], rtol=2e-6)
    # The value a season before each target (the horizon is shorter than a season), read from the data.
    lookup = complete.set_index(["unique_id", "ds"])["y"]
    source = (forecasts["ds"].dt.to_period("M") - SEASON).dt.to_timestamp()
    expected = lookup.reindex(pd.MultiIndex.from_arrays([forecasts["unique_id"], source])).to_numpy()
    np.testing.assert_allclose(forecasts["seq2seq"], expected, rtol=2e-6)


def test_explain_then_predict_on_the_same_inputs_runs_the_network_once(fitted, panel):
    df, _ = panel
    future = future_frame(df, 6)
    calls, run = [], fitted.network_.run
    # a forecast pass runs the network once, and once more where the partners follow the covariates (partner_shift)
    runs = 2 if follows_covariates(fitted.state_) and any(w > 0 for w in fitted._blend_weights().values()) else 1

    def counted(*args, **kwargs):
        calls.append(1)
        return run(*args, **kwargs)

    fitted.network_.run = counted
    try:
        fitted._cache.clear()
        attention = fitted.explain(df=df, future_df=future)
        forecast = fitted.predict(df=df, future_df=future)
        assert len(calls) == runs
        assert (
            len(forecast) == 6 * df["unique_id"].nunique()
            and np.isclose(attention.groupby(["unique_id", "step"])["weight"].sum(), 1).all()
        )
        fitted.explain(df=df, future_df=future.assign(promo=1.0))  # other inputs: a new pass
        assert len(calls) == 2 * runs
        changed = df.copy()
        changed.loc[changed.index[-1], "y"] += 1.0  # same shapes, one value changed: a new pass
        fitted.predict(df=changed, future_df=future)
        assert len(calls) == 3 * runs
        fitted.explain(df=changed, future_df=future)  # the shares: predict's pass did not take them
        assert len(calls) == 4 * runs
        fitted.predict(df=changed, future_df=future)
        assert len(calls) == 4 * runs
    finally:
        del fitted.network_.run


def test_a_model_file_saved_by_version_0_1_0_loads_and_forecasts_identically():
    model = Seq2SeqForecaster.load(DATA / "model_0_1_0")
    read = dict(float_precision="round_trip")
    future = pd.read_csv(DATA / "model_0_1_0_future.csv", parse_dates=["ds"], **read)
    expected = pd.read_csv(DATA / "model_0_1_0_forecast.csv", parse_dates=["ds"], **read)
    # Identical up to the last bits that library releases move (numpy and torch kernels); the network computes in float32.
    pd.testing.assert_frame_equal(model.predict(future_df=future), expected, check_exact=False, rtol=1e-7, atol=0.0)
    attention = pd.read_csv(DATA / "model_0_1_0_attention.csv", parse_dates=["ds", "ds_history"], **read)
    explanation = model.explain(future_df=future)
    # The account is added beside; weights identical up to the last bits, as above.
    pd.testing.assert_frame_equal(explanation[attention.columns], attention, check_exact=False, rtol=1e-7, atol=1e-12)
    assert {"contribution", "step_head", "y_hat"} <= set(explanation.columns)
    assert isinstance(model.state_, FittedState) and model.state_.trend_line is True  # resolved from the file's freq


def test_a_model_file_saved_by_version_0_3_0_forecasts_identically():
    """0.3.0 calibrated every level (Holt-Winters' mix and learnt factors) without a choice: its file keeps that."""
    model = Seq2SeqForecaster.load(DATA / "model_0_3_0")
    calibration = model.state_.calibration
    assert calibration.treatment is None and calibration.shape > 0 and calibration.factors is not None
    expected = pd.read_csv(DATA / "model_0_3_0_forecast.csv", parse_dates=["ds"], float_precision="round_trip")
    pd.testing.assert_frame_equal(model.predict(), expected, check_exact=False, rtol=1e-7, atol=0.0)


def test_fitted_state_round_trips_as_one_object(fitted, tmp_path):
    fitted.save(tmp_path / "model")
    loaded = Seq2SeqForecaster.load(tmp_path / "model")
    assert loaded.state_.to_dict() == fitted.state_.to_dict()
    pd.testing.assert_frame_equal(loaded.state_.history, fitted.state_.history)


def test_every_constructor_parameter_has_one_constraint_and_arguments_after_horizon_are_keyword_only():
    signature = inspect.signature(Seq2SeqForecaster.__init__)
    names = [name for name in signature.parameters if name != "self"]
    assert sorted(names) == sorted(CONSTRAINTS)
    assert all(signature.parameters[name].kind is inspect.Parameter.KEYWORD_ONLY for name in names[1:])
    with pytest.raises(TypeError):
        Seq2SeqForecaster(6, 12)


@pytest.mark.parametrize(
    "bad",
    [{"horizon": 0}, {"dropout": 1.0}, {"cell": "rnn"}, {"warm_start": "yes"}, {"random_state": -1}, {"learning_rate": 0}],
)
def test_a_parameter_outside_its_constraint_is_refused_by_name(panel, bad):
    name = next(iter(bad))
    with pytest.raises(ValueError, match=f"`{name}` must be"):
        fast_model(**bad).fit(panel[0])


def test_warm_start_continues_from_the_weights_and_extends_encoders_for_new_categories():
    df, _ = make_panel(n_series=9, length=48, seed=5, short_share=0.0, missing_share=0.0)
    first = df[df["group"] != "C"]
    # Partners fixed: each fit chooses the blend anew on its own held-out windows.
    model = fast_model(static_covariates=["group"], warm_start=True, max_steps=30, theta_weight=0.0, holt_winters_weight=0.0)
    model.fit(first)
    old_forecast = model.predict(df=first)
    before = {k: v.clone() for k, v in model.network_.state_dict().items()}
    # Widened weights alone leave the forecast of series with known categories unchanged.
    model.set_params(max_steps=1, learning_rate=1e-12)
    model.fit(df)
    assert model.state_.features.categories["group"] == ["A", "B", "C"] and model.state_.warm_starts == 1
    np.testing.assert_allclose(model.predict(df=first)["y_hat"], old_forecast["y_hat"], rtol=1e-5)
    after = model.network_.state_dict()
    static = model.network_config_.static_features
    kept = before["members.0.input_proj.weight"].shape[1] - 2  # two known categories
    grown = after["members.0.input_proj.weight"]  # one step of 1e-12 moves no weight by more than 1e-11
    torch.testing.assert_close(grown[:, : kept + 2], before["members.0.input_proj.weight"], rtol=0, atol=1e-11)
    assert grown[:, kept + 2 :].abs().max() < 1e-11 and static == 3  # the new category's column starts at zero
    # A cold fit of the same budget starts elsewhere.
    cold = fast_model(static_covariates=["group"], max_steps=1, learning_rate=1e-12).fit(df)
    assert not np.allclose(cold.predict(df=first)["y_hat"], old_forecast["y_hat"], rtol=1e-3)


def test_warm_start_with_an_incompatible_change_warns_and_fits_from_scratch(panel):
    df, _ = panel
    model = fast_model(warm_start=True).fit(df)
    model.set_params(hidden_size=8)
    with pytest.warns(UserWarning, match="network's size"):
        model.fit(df)
    assert model.state_.warm_starts == 0 and model.network_config_.hidden_size == 8
    model.set_params(past_covariates=["traffic"])
    with pytest.warns(UserWarning, match="covariate roles changed"):
        model.fit(df)


def test_backtest_warm_starts_each_refit_from_the_previous_fold(complete):
    model = fast_model(warm_start=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = backtest(model, complete, n_windows=3, baselines=(), progress=False)
    assert result.last_model.state_.warm_starts == 2
    assert not hasattr(model, "network_"), "the caller's model is never fitted by a backtest"
