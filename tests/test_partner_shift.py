"""The partners' forecasts take what the future-known covariates change (``model.partner_shift``)."""

from __future__ import annotations

import copy
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from conftest import fast_model

from forecaster import Seq2SeqForecaster
from forecaster.model.partner_shift import reference_covariates


def _panel(width: int, first_col: int = 0) -> SimpleNamespace:
    future = np.tile(np.arange(width, dtype=np.float32)[None, :, None], (1, 1, 2))
    future[:, :, 1] *= 10.0
    return SimpleNamespace(future=future, first_col=np.array([first_col]))


def test_reference_is_the_latest_period_of_the_same_phase_up_to_the_origin():
    panel = _panel(20)
    out = reference_covariates(panel, np.array([0]), np.array([10]), 4, seasons=np.array([3]))
    # steps 1-4 are columns 11-14; their phase's latest columns up to the origin 10: 8, 9, 10, 8
    np.testing.assert_allclose(out[0, :, 0], [8.0, 9.0, 10.0, 8.0])
    np.testing.assert_allclose(out[0, :, 1], [80.0, 90.0, 100.0, 80.0])


def test_without_a_season_the_reference_is_the_origin():
    out = reference_covariates(_panel(20), np.array([0]), np.array([10]), 3, seasons=np.array([1]))
    np.testing.assert_allclose(out[0, :, 0], [10.0, 10.0, 10.0])


def test_a_step_whose_phase_has_no_period_since_the_series_start_keeps_its_own_values():
    panel = _panel(20, first_col=10)
    panel.future[:, :10] = 1e6  # padding: reading it would show
    out = reference_covariates(panel, np.array([0]), np.array([10]), 3, seasons=np.array([3]))
    np.testing.assert_allclose(out[0, :, 0], [11.0, 12.0, 10.0])


def test_windows_of_different_seasons_are_read_each_with_its_own():
    out = reference_covariates(_panel(30), np.array([0, 0]), np.array([20, 20]), 2, seasons=np.array([2, 4]))
    np.testing.assert_allclose(out[0, :, 0], [19.0, 20.0])
    np.testing.assert_allclose(out[1, :, 0], [17.0, 18.0])


HORIZON = 7
QUANTILES = ["y_hat", *(f"y_hat_q{q}" for q in range(10, 100, 10))]


def _stores(n_series: int = 6, days: int = 120, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Daily sales with a weekend flag known ahead (history: every Saturday and Sunday; its horizon as ``future``)."""
    rng = np.random.default_rng(seed)
    ds = pd.date_range("2024-01-01", periods=days + HORIZON, freq="D")
    weekend = (ds.dayofweek >= 5).astype(float)
    frames = [
        pd.DataFrame(
            {"unique_id": f"s{i}", "ds": ds, "y": 100 + 10 * i - 30 * weekend + rng.normal(0, 3, len(ds)), "weekend": weekend}
        )
        for i in range(n_series)
    ]
    df = pd.concat(frames, ignore_index=True)
    last = ds[days - 1]
    return df[df["ds"] <= last].reset_index(drop=True), df[df["ds"] > last].drop(columns="y").reset_index(drop=True)


@pytest.fixture(scope="module")
def stores():
    history, future = _stores()
    model = fast_model(horizon=HORIZON, input_size=14, future_covariates=["weekend"], closed_when=None, max_steps=60)
    return model.fit(history), future


def _with(model, follow: bool, weight: float):
    """The fitted model with the partners at ``weight`` each and following the covariates or not."""
    state = model.state_
    blend = {"theta_weight": weight, "holt_winters_weight": weight}
    state = replace(state, partners_follow_covariates=follow, calibration=replace(state.calibration, blend=blend))
    return copy.copy(model).set_fitted(state, model.network_, model.device_, model.train_results_)


def test_the_partners_take_what_the_network_says_the_covariates_change(stores):
    """With the weekend flag as its history had it, the reference is the flag itself and nothing moves; with a
    weekday flagged as a weekend (a holiday), the blend moves by the partners' weight times the network's own change
    between the flag as given and the flag as the partners' seasons saw it."""
    model, future = stores
    assert model.partners_follow_covariates_ is True
    holiday = future.assign(weekend=np.where(future["ds"] == future["ds"].min() + pd.Timedelta(days=2), 1.0, future["weekend"]))
    flagged = (holiday["weekend"] != future["weekend"]).to_numpy()
    assert flagged.any() and not flagged.all()
    network = _with(model, True, 0.0)
    effect = (network.predict(future_df=holiday)["y_hat"] - network.predict(future_df=future)["y_hat"]).to_numpy()
    assert np.abs(effect[flagged]).min() > 0.0 and np.all(effect[~flagged] == 0.0)
    following = _with(model, True, 0.2).predict(future_df=holiday)
    blind = _with(model, False, 0.2).predict(future_df=holiday)
    np.testing.assert_allclose((following["y_hat"] - blind["y_hat"]).to_numpy(), 0.4 * effect, atol=1e-6)
    as_history = future
    np.testing.assert_array_equal(
        _with(model, True, 0.2).predict(future_df=as_history)[QUANTILES],
        _with(model, False, 0.2).predict(future_df=as_history)[QUANTILES],
    )


def test_the_choice_is_resolved_recorded_and_can_be_turned_off(stores, tmp_path):
    model, future = stores
    path = tmp_path / "model"
    model.save(path)
    loaded = Seq2SeqForecaster.load(path)
    assert loaded.partners_follow_covariates_ is True
    pd.testing.assert_frame_equal(loaded.predict(future_df=future), model.predict(future_df=future))
    history, _ = _stores(n_series=2, days=60)
    assert fast_model(horizon=HORIZON).fit(history.drop(columns="weekend")).partners_follow_covariates_ is False
    off = fast_model(horizon=HORIZON, future_covariates=["weekend"], partners_follow_covariates=False).fit(history)
    assert off.partners_follow_covariates_ is False


def test_predict_without_data_reads_the_same_reference_as_with_the_training_frame():
    """The kept history tail holds the season the reference reads, even where the window is shorter than it."""
    history, future = _stores(n_series=4, days=80)
    future = future.assign(weekend=np.where(future["ds"] == future["ds"].min(), 1.0, future["weekend"]))
    params = dict(input_size=6, seasonal_profile=False, trend_line=False, theta_weight=0.2, holt_winters_weight=0.2)
    model = fast_model(horizon=HORIZON, future_covariates=["weekend"], closed_when=None, **params).fit(history)
    pd.testing.assert_frame_equal(model.predict(future_df=future), model.predict(df=history, future_df=future))


def test_nothing_moves_where_the_covariates_equal_their_reference_with_observation_values():
    """The observation design's median is a sum of parts (float64); the reference pass must not leave its rounding."""
    history, future = _stores(n_series=4, days=80)
    model = fast_model(horizon=HORIZON, future_covariates=["weekend"], closed_when=None, attention_values="observations").fit(
        history
    )
    following, blind = _with(model, True, 0.2), _with(model, False, 0.2)
    moved = following.predict(future_df=future)[QUANTILES].to_numpy() - blind.predict(future_df=future)[QUANTILES].to_numpy()
    assert np.abs(moved).max() < 1e-9 * np.abs(blind.predict(future_df=future)["y_hat"]).max()
