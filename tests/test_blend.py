"""The statistical blend: partners are fitted on the kept history, the blend is exact."""

import numpy as np
import pandas as pd
import pytest
from conftest import fast_model, future_frame
from statsforecast.models import Theta

from forecaster.partners.blend import DEFAULT_HOLT_WINTERS_WEIGHT, DEFAULT_THETA_WEIGHT, blend_quantiles, partner_distributions
from forecaster.partners.holt_winters import holt_winters_forecasts
from forecaster.partners.standard_theta import standard_theta_forecasts


def theta_forecasts(y, first_col, last_col, horizon, season_length, history):
    return partner_distributions([standard_theta_forecasts], y, first_col, last_col, horizon, season_length, history)[0].mean


def _seasonal(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    return 50 + 0.3 * t + 8 * np.sin(2 * np.pi * t / 12) + rng.normal(0, 1, n)


def test_theta_forecasts_match_statsforecast_on_the_last_history_periods():
    width, horizon, history = 60, 5, 40
    long_series, short_series = _seasonal(55, 0), _seasonal(30, 1)
    y = np.full((3, width + horizon), np.nan)
    y[0, width - 55 : width] = long_series
    y[1, width - 30 : width] = short_series
    y[2, width - 3 : width] = [1.0, 2.0, 3.0]  # too short for Theta
    first_col = np.array([width - 55, width - 30, width - 3])
    out = theta_forecasts(y, first_col, width - 1, horizon, 12, history)
    expected_long = Theta(season_length=12).forecast(y=long_series[-history:], h=horizon)["mean"]
    expected_short = Theta(season_length=12).forecast(y=short_series, h=horizon)["mean"]
    np.testing.assert_allclose(out[0], expected_long, rtol=1e-10)
    np.testing.assert_allclose(out[1], expected_short, rtol=1e-10)
    assert np.isnan(out[2]).all()


def test_missing_targets_are_filled_forward_for_theta():
    series = _seasonal(36, 2)
    gappy = series.copy()
    gappy[20] = np.nan
    filled = gappy.copy()
    filled[20] = filled[19]
    out = theta_forecasts(gappy[None, :], np.array([0]), 35, 4, 12, 36)
    np.testing.assert_allclose(out[0], Theta(season_length=12).forecast(y=filled, h=4)["mean"], rtol=1e-10)


def test_blend_moves_the_median_and_keeps_the_interval_width():
    values = np.array([[[8.0, 10.0, 13.0], [9.0, 11.0, 12.0]], [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]])  # (2, 2, 3)
    theta = np.array([[14.0, 7.0], [np.nan, np.nan]])
    out = blend_quantiles(values, [theta], [0.25], median_index=1)
    np.testing.assert_allclose(out[0, :, 1], [0.75 * 10 + 0.25 * 14, 0.75 * 11 + 0.25 * 7])
    np.testing.assert_allclose(out[0, :, 2] - out[0, :, 0], values[0, :, 2] - values[0, :, 0])
    np.testing.assert_array_equal(out[1], values[1])  # no Theta forecast: the network's


def test_two_partners_and_a_missing_one_keep_its_weight_with_the_network():
    values = np.array([[[8.0, 10.0, 13.0]], [[1.0, 2.0, 3.0]]])  # (2, 1, 3)
    theta = np.array([[14.0], [4.0]])
    holt_winters = np.array([[6.0], [np.nan]])
    out = blend_quantiles(values, [theta, holt_winters], [0.15, 0.15], median_index=1)
    np.testing.assert_allclose(out[0, 0, 1], 0.7 * 10 + 0.15 * 14 + 0.15 * 6)
    np.testing.assert_allclose(out[1, 0, 1], 0.85 * 2 + 0.15 * 4)
    np.testing.assert_allclose(out[:, :, 2] - out[:, :, 0], values[:, :, 2] - values[:, :, 0])


@pytest.mark.parametrize("log_target", [False, True])
def test_default_forecast_is_the_network_blended_with_both_partners(panel, log_target):
    """The partners are fitted on the targets in their own units, also when the network models log(1 + y)."""
    df, _ = panel
    weights = {"theta_weight": DEFAULT_THETA_WEIGHT, "holt_winters_weight": DEFAULT_HOLT_WINTERS_WEIGHT}
    network_only = fast_model(theta_weight=0.0, holt_winters_weight=0.0, log_target=log_target).fit(df).predict()
    model = fast_model(log_target=log_target, **weights).fit(df)
    blended = model.predict()
    assert model._blend_weights() == weights
    complete = model.history_.groupby("unique_id")["y"].apply(lambda s: s.notna().all())
    uid = complete[complete].index[0]
    kept = model.history_.loc[model.history_["unique_id"] == uid, "y"].to_numpy()
    theta = standard_theta_forecasts(kept[None, :], np.array([len(kept)]), 6, 12)[0]
    holt_winters = holt_winters_forecasts(kept[None, :], np.array([len(kept)]), 6, 12)[0]
    rows = blended["unique_id"] == uid
    network_weight = 1 - DEFAULT_THETA_WEIGHT - DEFAULT_HOLT_WINTERS_WEIGHT
    expected = network_weight * network_only.loc[rows, "y_hat"] + DEFAULT_THETA_WEIGHT * theta
    expected += DEFAULT_HOLT_WINTERS_WEIGHT * holt_winters
    np.testing.assert_allclose(blended.loc[rows, "y_hat"], expected, rtol=1e-9)
    assert not np.allclose(blended.loc[rows, "y_hat"], network_only.loc[rows, "y_hat"])


def test_the_blend_moves_every_quantile_with_the_median_and_keeps_the_width():
    rng = np.random.default_rng(0)
    values = np.sort(rng.normal(size=(4, 3, 5)), axis=2)
    partner = rng.normal(size=(4, 3))
    partner[0, 0] = np.nan  # no partner forecast: the weight stays with the network
    blended = blend_quantiles(values, [partner], [0.3], median_index=2)
    np.testing.assert_allclose(np.diff(blended, axis=2), np.diff(values, axis=2), atol=1e-12)
    expected = 0.7 * values[:, :, 2] + 0.3 * np.where(np.isnan(partner), values[:, :, 2], partner)
    np.testing.assert_allclose(blended[:, :, 2], expected, atol=1e-12)


def test_each_partner_can_be_switched_off_alone(panel):
    df, _ = panel
    network = fast_model(theta_weight=0.0, holt_winters_weight=0.0).fit(df)
    theta_only = fast_model(theta_weight=0.15, holt_winters_weight=0.0).fit(df)
    complete = theta_only.history_.groupby("unique_id")["y"].apply(lambda s: s.notna().all())
    uid = complete[complete].index[0]
    kept = theta_only.history_.loc[theta_only.history_["unique_id"] == uid, "y"].to_numpy()
    theta = standard_theta_forecasts(kept[None, :], np.array([len(kept)]), 6, 12)[0]
    rows = network.predict()["unique_id"] == uid
    expected = 0.85 * network.predict().loc[rows, "y_hat"] + 0.15 * theta
    np.testing.assert_allclose(theta_only.predict().loc[rows, "y_hat"], expected, rtol=1e-9)


def test_the_blend_is_chosen_at_fit_with_or_without_covariates_and_explicit_weights_are_kept(panel):
    """Declaring a covariate no longer switches the partners off: the fit chooses them on held-out windows."""
    df, _ = panel
    future = future_frame(df, 6)
    auto = fast_model(future_covariates=["promo"]).fit(df)
    chosen = auto.state_.calibration.blend
    assert set(chosen) == {"theta_weight", "holt_winters_weight"} and auto._blend_weights() == chosen
    same = fast_model(future_covariates=["promo"], **chosen).fit(df)  # the chosen weights, given: the same forecast
    pd.testing.assert_frame_equal(auto.predict(future_df=future), same.predict(future_df=future), check_exact=True)
    given = fast_model(future_covariates=["promo"], theta_weight=0.5, holt_winters_weight=0.2).fit(df)
    assert given._blend_weights() == given.state_.calibration.blend == {"theta_weight": 0.5, "holt_winters_weight": 0.2}


@pytest.mark.parametrize("name", ["theta_weight", "holt_winters_weight"])
@pytest.mark.parametrize("weight", [-0.1, 1.5])
def test_a_blend_weight_outside_zero_one_is_refused(panel, name, weight):
    with pytest.raises(ValueError, match=name):
        fast_model(**{name: weight}).fit(panel[0])


def test_blend_weights_summing_above_one_are_refused(panel):
    with pytest.raises(ValueError, match="sum to at most 1"):
        fast_model(theta_weight=0.6, holt_winters_weight=0.5).fit(panel[0])


def test_report_states_how_the_forecast_was_made():
    from forecaster.evaluation.report import _blend_line

    both = _blend_line({"theta_weight": 0.15, "holt_winters_weight": 0.15})
    assert "0.7 x the network + 0.15 x the Theta method + 0.15 x damped Holt-Winters" in both
    assert "0.75 x the network + 0.25 x the Theta method," in _blend_line({"theta_weight": 0.25, "holt_winters_weight": 0.0})
    assert "network alone" in _blend_line({"theta_weight": 0.0, "holt_winters_weight": 0.0})


def test_a_non_finite_partner_forecast_leaves_the_network_forecast():
    def overflowing(y, lengths, horizon, season_length):
        out = np.ones((len(y), horizon))
        out[0, -1] = np.inf
        return out

    y = np.stack([_seasonal(30, 0), _seasonal(30, 1)])
    out = partner_distributions([overflowing], y, np.array([0, 0]), 29, 3, 12, 30)[0].mean
    assert np.isnan(out[0]).all()
    np.testing.assert_array_equal(out[1], 1.0)
    values = np.zeros((2, 3, 3))
    np.testing.assert_array_equal(blend_quantiles(values, [out], [0.25], 1)[0], values[0])


def test_the_partner_distribution_mixes_into_the_offsets_and_leaves_the_median():
    from scipy.stats import norm

    from forecaster.partners.blend import PartnerForecast, mix_offsets
    from forecaster.partners.distribution import PartnerDistribution

    levels = (0.1, 0.5, 0.9)
    median = np.array([[10.0, 20.0], [30.0, 40.0], [50.0, 60.0]])
    network = np.stack([median - 4.0, median, median + 2.0], axis=2)  # (3 windows, 2 steps, 3 levels)
    spread = np.array([[2.0, 2.0], [np.nan, np.nan], [0.05, 0.05]]) / norm.ppf(0.9)  # the second window has no distribution
    log = np.array([False, False, True])  # the third is modelled on log(y): offsets center * (exp(+-z s) - 1)
    center = median + 1.0
    forecast = PartnerForecast(mean=center, distribution=PartnerDistribution(center, spread, log))
    out = mix_offsets(network, [forecast], [0.15], 1, levels, share=0.5)
    np.testing.assert_array_equal(out[:, :, 1], median)
    np.testing.assert_allclose(out[0, :, 0], median[0] - 3.0)  # half of -4 and half of -2
    np.testing.assert_allclose(out[0, :, 2], median[0] + 2.0)
    np.testing.assert_array_equal(out[1], network[1])  # no usable partner offsets: the network's
    np.testing.assert_allclose(out[2, :, 2], median[2] + 0.5 * 2.0 + 0.5 * center[2] * np.expm1(0.05))
    np.testing.assert_allclose(out[2, :, 0], median[2] - 0.5 * 4.0 + 0.5 * center[2] * np.expm1(-0.05))
    np.testing.assert_array_equal(mix_offsets(network, [forecast], [0.0], 1, levels), network)  # a partner not blended in
    np.testing.assert_array_equal(mix_offsets(network, [forecast._replace(distribution=None)], [0.15], 1, levels), network)


def test_a_model_blending_holt_winters_mixes_its_distribution_and_files_without_the_share_do_not(panel, tmp_path, monkeypatch):
    """The interval mixes in damped Holt-Winters' own distribution; the median does not move; old files forecast as before."""
    import json

    from test_persistence import rewrite_config

    import forecaster.model.calibration as calibration
    from forecaster import Seq2SeqForecaster

    # The mixed treatment, whatever the held-out windows of this small panel say (they choose it only on evidence).
    def mixed_where_possible(blended, mixed, *args):
        return ("mixed" if mixed is not None else "network"), {}

    monkeypatch.setattr(calibration, "choose_treatment", mixed_where_possible)
    df, _ = panel
    model = fast_model().fit(df)
    assert model.state_.calibration.shape == 0.5 and model.state_.calibration.blend["holt_winters_weight"] > 0
    assert fast_model(holt_winters_weight=0.0).fit(df).state_.calibration.shape == 0.0
    model.save(tmp_path / "model")
    config = json.loads((tmp_path / "model" / "config.json").read_text())
    del config["fitted"]["calibration"]["shape"]  # a file from before the mix
    rewrite_config(tmp_path / "model", config)
    old = Seq2SeqForecaster.load(tmp_path / "model")
    assert old.state_.calibration.shape == 0.0
    mixed, unmixed = model.predict(), old.predict()
    pd.testing.assert_series_equal(mixed["y_hat"], unmixed["y_hat"], check_exact=True)
    assert not np.allclose(mixed["y_hat_q10"], unmixed["y_hat_q10"])
    assert (mixed["y_hat_q10"] <= mixed["y_hat"]).all() and (mixed["y_hat_q90"] >= mixed["y_hat"]).all()


def test_a_partner_offset_counts_at_most_three_times_the_network_s():
    """A log-scale fit to a volatile history can put its q90 at many times the series' peak; the mix bounds it."""
    from forecaster.partners.blend import MAX_PARTNER_OFFSET, PartnerForecast, mix_offsets
    from forecaster.partners.distribution import PartnerDistribution

    median = np.full((1, 2), 100.0)
    network = np.stack([median - 10.0, median, median + 10.0], axis=2)
    wild = PartnerDistribution(median, np.full((1, 2), 3.0), np.array([True]))  # q90 at 100 * exp(1.28 * 3), about 4,700
    out = mix_offsets(network, [PartnerForecast(median, wild)], [0.15], 1, (0.1, 0.5, 0.9), share=0.5)
    np.testing.assert_allclose(out[0, :, 2], 100.0 + 0.5 * 10.0 + 0.5 * MAX_PARTNER_OFFSET * 10.0)
    np.testing.assert_allclose(out[0, :, 0], 100.0 - 0.5 * 10.0 - 0.5 * MAX_PARTNER_OFFSET * 10.0)  # q10 at 2, bounded too


def test_mixing_in_blocks_of_rows_gives_the_same_quantiles(monkeypatch):
    import forecaster.partners.blend as blend
    from forecaster.partners.distribution import PartnerDistribution

    rng = np.random.default_rng(0)
    median = rng.uniform(50, 150, size=(25, 4))
    network = median[..., None] + np.sort(rng.normal(0, 5, size=(25, 4, 5)), axis=2)
    network[:, :, 2] = median
    spread = rng.uniform(0.5, 8.0, size=(25, 4))
    spread[3] = np.nan
    partner = blend.PartnerForecast(median, PartnerDistribution(median, spread, rng.random(25) < 0.3))
    levels = (0.1, 0.3, 0.5, 0.7, 0.9)
    whole = blend.mix_offsets(network, [partner], [0.15], 2, levels)
    monkeypatch.setattr(blend, "MIX_ROWS", 4)
    np.testing.assert_array_equal(blend.mix_offsets(network, [partner], [0.15], 2, levels), whole)
