"""Calibration on held-out windows: the blend choice, the interval factors, and windows no training window reads."""

import numpy as np
import pandas as pd
import pytest
from conftest import fast_model
from scipy.stats import norm

from forecaster import Seq2SeqForecaster, backtest
from forecaster.data.roles import CovariateRoles
from forecaster.data.validation import Columns, clean_history
from forecaster.evaluation.metrics import score_quantiles, weighted_quantile_loss
from forecaster.model.calibration import HoldOut, choose_blend, choose_treatment, critical_t, held_out_wql, plan_holdout
from forecaster.model.fitting import network_config, training_job
from forecaster.model.intervals import MAX_FACTOR, apply_factors, offset_factors
from forecaster.model.resolve import training_quantiles
from forecaster.partners.blend import DEFAULT_HOLT_WINTERS_WEIGHT, DEFAULT_THETA_WEIGHT, default_weights

LEVELS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
FIXED = {"theta_weight": None, "holt_winters_weight": None}
DEFAULTS = {"theta_weight": DEFAULT_THETA_WEIGHT, "holt_winters_weight": DEFAULT_HOLT_WINTERS_WEIGHT}


def validated(model, frame):
    """``frame`` validated for ``model`` as ``fit`` validates it: the frame and its time zone."""
    params = model.get_params()
    return clean_history(frame, Columns.from_params(params), CovariateRoles.from_params(params))


def _normal_quantiles(n: int, horizon: int, width: float) -> np.ndarray:
    """(n, horizon, 9) deciles of N(0, width^2) around a zero median."""
    return np.broadcast_to(width * norm.ppf(LEVELS), (n, horizon, len(LEVELS))).copy()


@pytest.mark.parametrize("truth", [2.0, 0.5])
def test_factors_give_each_central_interval_its_nominal_coverage(truth):
    """Quantiles of N(0, 1) for actuals of N(0, truth^2): every offset is scaled by about ``truth``."""
    rng = np.random.default_rng(0)
    quantiles = _normal_quantiles(4000, 3, 1.0)
    factors = offset_factors(quantiles, rng.normal(0.0, truth, (4000, 3)), LEVELS, 4)
    # The outer levels' factors are read off wide offsets; the inner ones also carry the estimated shift's noise.
    np.testing.assert_allclose(factors[:, [0, 1, 7, 8]], truth, rtol=0.08)
    assert (factors[:, 4] == 1.0).all()
    fresh = rng.normal(0.0, truth, (4000, 3))
    calibrated = apply_factors(quantiles, factors, 4)
    hits = (fresh[..., None] <= calibrated).mean(axis=(0, 1))
    np.testing.assert_allclose(hits, LEVELS, atol=0.02)


def test_a_level_without_a_mirror_gets_its_own_hit_rate():
    """(0.05, 0.5, 0.8): neither tail level has a mirror; each is calibrated alone, not left at 1."""
    rng = np.random.default_rng(5)
    levels = (0.05, 0.5, 0.8)
    quantiles = np.broadcast_to(norm.ppf(levels), (4000, 2, 3)).copy()
    factors = offset_factors(quantiles, rng.normal(0.0, 2.0, (4000, 2)), levels, 1)
    np.testing.assert_allclose(factors[:, [0, 2]], 2.0, rtol=0.08)


def test_too_few_windows_never_narrow_the_network_interval():
    """Three windows give no finite 80% conformal bound: the factor is at least 1, however close the actuals."""
    quantiles = _normal_quantiles(3, 2, 1.0)
    factors = offset_factors(quantiles, np.full((3, 2), 0.01), LEVELS, 4)
    assert (factors[:, [0, 8]] >= 1.0).all()
    many = offset_factors(_normal_quantiles(400, 2, 1.0), np.full((400, 2), 0.01), LEVELS, 4)
    assert (many[:, [0, 8]] < 0.1).all()  # with evidence, an interval far too wide does narrow


def test_a_shared_shock_neither_tilts_nor_widens_the_intervals():
    """Held-out actuals all shifted down by a shock their periods share: the shift is taken out, the shape is kept.

    Per-level factors fitted to the shifted actuals would stretch the lower levels and shrink the upper ones
    (on the Tourism training part that left the upper levels under-covered in the next periods).
    """
    rng = np.random.default_rng(1)
    quantiles = _normal_quantiles(3000, 2, 1.0)
    factors = offset_factors(quantiles, rng.normal(-1.0, 1.0, (3000, 2)), LEVELS, 4)
    np.testing.assert_allclose(factors[:, [0, 1, 7, 8]], 1.0, rtol=0.1)
    skewed = rng.gamma(2.0, 1.0, (3000, 2)) - 2.0  # a long upper tail, no shock: upper factors above lower ones
    shape = offset_factors(quantiles, skewed, LEVELS, 4)
    assert (shape[:, 8] > shape[:, 0] * 1.3).all()


def test_windows_of_few_series_share_one_factor_per_pair_of_levels():
    """One series: its shift is its own error, not a shock shared across series; the pairs widen alike instead."""
    rng = np.random.default_rng(6)
    quantiles = _normal_quantiles(3000, 2, 1.0)
    factors = offset_factors(quantiles, rng.normal(-1.0, 1.0, (3000, 2)), LEVELS, 4, n_series=1)
    np.testing.assert_allclose(factors[:, 0], factors[:, 8])
    np.testing.assert_allclose(factors[:, 3], factors[:, 5])
    assert (factors[:, 0] > 1.2).all()
    many = offset_factors(quantiles, rng.normal(-1.0, 1.0, (3000, 2)), LEVELS, 4, n_series=300)
    np.testing.assert_allclose(many[:, [0, 8]], 1.0, rtol=0.1)


def test_applied_factors_keep_the_median_exact_and_the_levels_in_order():
    rng = np.random.default_rng(2)
    quantiles = np.sort(rng.normal(size=(50, 4, 9)), axis=2)
    factors = rng.uniform(0.0, 3.0, size=(4, 9))
    factors[:, 4] = 1.0
    out = apply_factors(quantiles, factors, 4)
    np.testing.assert_array_equal(out[:, :, 4], quantiles[:, :, 4])
    assert (np.diff(out, axis=2) >= 0).all()
    assert apply_factors(quantiles, None, 4) is quantiles


def _windows(rng, n, horizon=6):
    actual = rng.normal(0.0, 1.0, (n, horizon))
    return actual, np.ones(n)


def test_partners_that_hurt_are_switched_off():
    rng = np.random.default_rng(3)
    actual, scale = _windows(rng, 200)
    median = actual + rng.normal(0.0, 0.3, actual.shape)  # a good network
    awful = [actual + 5.0, actual + 4.0]  # partners far off (a demand they cannot see the driver of)
    assert choose_blend(median, awful, actual, scale, FIXED) == {"theta_weight": 0.0, "holt_winters_weight": 0.0}


def test_the_default_blend_stays_unless_another_is_clearly_better():
    rng = np.random.default_rng(4)
    actual, scale = _windows(rng, 200)
    median = actual + rng.normal(0.0, 1.0, actual.shape)
    partners = [actual + rng.normal(0.0, 1.0, actual.shape), actual + rng.normal(0.0, 1.0, actual.shape)]
    assert choose_blend(median, partners, actual, scale, FIXED) == DEFAULTS
    # One window is no evidence to leave the default, however bad the partners look in it.
    few = choose_blend(median[:1], [p[:1] + 3.0 for p in partners], actual[:1], scale[:1], FIXED)
    assert few == DEFAULTS
    # Windows of one series move together: however bad the partners look there, one series is no evidence.
    one_series = choose_blend(median, [actual + 5.0, actual + 4.0], actual, scale, FIXED, units=np.zeros(200))
    assert one_series == DEFAULTS
    # An explicit weight is kept; the other partner is still chosen.
    fixed = choose_blend(median, [actual + 5.0, partners[1]], actual, scale, {"theta_weight": 0.4, "holt_winters_weight": None})
    assert fixed["theta_weight"] == 0.4 and fixed["holt_winters_weight"] in (0.0, DEFAULT_HOLT_WINTERS_WEIGHT)


def test_no_training_window_reads_a_held_out_target(panel):
    df, _ = panel
    model = fast_model(max_steps=5, early_stopping=False)
    frame = df.sort_values(["unique_id", "ds"])
    panel_ = model.fit_frame(*validated(model, frame))
    params = model.get_params()
    quantiles = training_quantiles(params["quantiles"])
    config = network_config(panel_, model._roles(), model.state_.features, quantiles, 12, params)
    job = training_job(panel_, model._roles(), config, model.fit_plan_, "cpu", params)
    holdout = job.holdout
    assert isinstance(holdout, HoldOut) and len(holdout.series) >= 1
    series, origins = holdout.windows(panel_)
    first_target = origins.min() + 1
    for row in holdout.series:
        reads = job.origins[job.series == row] + 6  # last target column of each training window
        assert reads.size == 0 or reads.max() < first_target
    others = np.setdiff1d(np.arange(len(panel_.ids)), holdout.series)
    assert (job.origins[np.isin(job.series, others)] + 6 == panel_.last_col).any()  # the rest train to the end


def test_the_default_blend_is_heavier_without_future_known_covariates(panel):
    """0.25 per partner without future-known covariates, 0.15 with them (the partners cannot see them)."""
    assert default_weights(False) == {"theta_weight": 0.25, "holt_winters_weight": 0.25}
    assert default_weights(True) == {"theta_weight": 0.15, "holt_winters_weight": 0.15}
    df, _ = panel
    plain = fast_model().fit(df[["unique_id", "ds", "y"]]).state_.calibration.blend
    assert all(weight in (0.0, 0.25) for weight in plain.values()), plain
    with_covariates = fast_model(future_covariates=["promo"]).fit(df[["unique_id", "ds", "y", "promo"]])
    assert all(weight in (0.0, 0.15) for weight in with_covariates.state_.calibration.blend.values())
    # Where the held-out windows cannot tell, the default stays: one series is no evidence.
    rng = np.random.default_rng(4)
    actual, scale = _windows(rng, 50)
    partners = [actual + 5.0, actual + 4.0]
    kept = choose_blend(actual, partners, actual, scale, FIXED, units=np.zeros(50), defaults=default_weights(True))
    assert kept == default_weights(True)


def test_explicit_weights_plus_the_default_of_an_unset_one_may_not_pass_one(panel):
    with pytest.raises(ValueError, match="sum to at most 1"):
        fast_model(theta_weight=0.9).fit(panel[0])  # Holt-Winters unset: up to its default


def test_held_out_windows_without_history_are_not_scored(panel):
    """Under early stopping every series is held out; a series shorter than two horizons gives no window from before it."""
    df, _ = panel
    short = pd.DataFrame({"unique_id": "tiny", "ds": pd.date_range("2010-01-01", periods=6, freq="MS"), "y": np.arange(6.0)})
    data = pd.concat([df[["unique_id", "ds", "y"]], short], ignore_index=True)
    model = fast_model(early_stopping=True).fit(data)
    built = model.fit_frame(*validated(model, data))
    holdout = plan_holdout(built, 6, 3, every_series=True, seed=0)
    series, origins = holdout.windows(built)
    assert (origins < built.first_col[series]).any()  # the plan reaches before the tiny series starts ...
    assert model.state_.calibration.n_windows == int((origins >= built.first_col[series]).sum())  # ... the scoring does not


def test_a_fifth_of_the_series_is_held_out_without_early_stopping_and_all_with_it(panel):
    df, _ = panel
    model = fast_model(max_steps=5)
    built = model.fit_frame(*validated(model, df))
    most = int(0.05 * np.median(built.length))  # origins per series: never more than 5% of a typical length
    some = plan_holdout(built, 6, 3, every_series=False, seed=0)
    assert len(some.series) == int(np.ceil(0.2 * len(built.ids))) and some.back == most
    every = plan_holdout(built, 6, 3, every_series=True, seed=0)
    assert len(every.series) == len(built.ids) and every.back == most


def test_a_backtest_reports_wql_and_hit_rates_for_the_model_and_the_baselines(panel):
    df, _ = panel
    result = backtest(fast_model(quantiles=LEVELS), df, n_windows=2, baselines=("seasonal_naive",), progress=False)
    summary = result.summary()
    assert {"wql", "coverage"} <= set(summary.columns)
    assert summary["wql"].notna().all() and (summary["wql"] > 0).all()
    rates = result.calibration()
    assert list(rates.index) == ["seq2seq", "seasonal_naive"] and list(rates.columns) == list(LEVELS)
    assert ((rates >= 0) & (rates <= 1)).all().all()
    # The WQL by hand from the forecasts, for the baseline (its q50 is its point forecast).
    f = result.forecasts.dropna(subset=["y", "seasonal_naive"])
    losses = []
    for q in LEVELS:
        column = "seasonal_naive" if q == 0.5 else f"seasonal_naive_q{round(q * 100)}"
        diff = f["y"] - f[column]
        losses.append(2 * np.maximum(q * diff, (q - 1) * diff).sum() / f["y"].abs().sum())
    assert summary.loc["seasonal_naive", "wql"] == pytest.approx(np.mean(losses), rel=1e-12)
    hit = (f["y"] <= f["seasonal_naive_q10"]).mean()
    assert rates.loc["seasonal_naive", 0.1] == pytest.approx(hit, rel=1e-12)


def test_the_calibration_round_trips_through_a_model_file(panel, tmp_path):
    df, _ = panel
    model = fast_model().fit(df)
    model.save(tmp_path / "m")
    loaded = type(model).load(tmp_path / "m")
    np.testing.assert_array_equal(loaded.state_.calibration.factors, model.state_.calibration.factors)
    assert loaded.state_.calibration.blend == model.state_.calibration.blend
    pd.testing.assert_frame_equal(loaded.predict(), model.predict(), check_exact=True)


def test_the_factors_are_learnt_on_the_offsets_the_forecast_then_scales(panel, monkeypatch):
    """What ``offset_factors`` sees at fit is what the forecast of the same held-out windows holds before its factors."""
    from dataclasses import replace

    import forecaster.model.calibration as calibration

    df, _ = panel
    seen = {}
    real_calibrate, real_factors = calibration.calibrate, calibration.offset_factors

    def calibrate(values, target, built, series, origins, *args, **kwargs):
        seen.update(panel=built, series=series, origins=origins)
        return real_calibrate(values, target, built, series, origins, *args, **kwargs)

    def offset_factors(quantiles, *args, **kwargs):
        seen["quantiles"] = quantiles.copy()
        return real_factors(quantiles, *args, **kwargs)

    monkeypatch.setattr("forecaster.model.fitting.calibrate", calibrate)
    monkeypatch.setattr(calibration, "offset_factors", offset_factors)
    # The treatment that learns factors on the mixed offsets, whatever the held-out WQL would choose.
    monkeypatch.setattr(calibration, "choose_treatment", lambda *args: ("mixed+factors", {}))
    model = fast_model().fit(df)
    assert model.state_.calibration.shape > 0  # the partner's distribution is mixed in
    model.state_ = replace(model.state_, calibration=replace(model.state_.calibration, factors=None))
    forecast = model.fitted().forecast_at(seen["panel"], seen["series"], seen["origins"])
    np.testing.assert_allclose(forecast.quantiles, seen["quantiles"], rtol=1e-10)


def _held_out(truth: float, width: float, n_series: int = 60, back: int = 5, horizon: int = 4):
    """Held-out windows of ``n_series`` series (``back`` each) around level 100: actuals N(100, truth^2), deciles of width."""
    rng = np.random.default_rng(1)
    series = np.repeat(np.arange(n_series), back)
    quantiles = 100.0 + _normal_quantiles(len(series), horizon, width)
    actual = 100.0 + rng.normal(0.0, truth, (len(series), horizon))
    return quantiles, actual, series


def test_held_out_wql_is_the_backtest_wql():
    quantiles, actual, series = _held_out(2.0, 1.0, n_series=5)
    rows = pd.DataFrame(
        {"unique_id": np.repeat(series, 4), "ds": np.tile(np.arange(4), len(series)), "y": actual.ravel(), "cutoff": 0}
    ).reset_index(drop=True)
    columns = {}
    for q, level in enumerate(LEVELS):
        name = f"m_q{round(level * 100)}"
        rows[name] = quantiles[:, :, q].ravel()
        columns[level] = name
    rows["m"] = rows["m_q50"]
    expected = weighted_quantile_loss(score_quantiles(rows, {"m": columns})).loc["m"]
    assert held_out_wql(quantiles, actual, LEVELS) == pytest.approx(expected, rel=1e-12)


def test_too_narrow_network_quantiles_are_widened_and_good_ones_stand():
    """Deciles of width 1 for actuals of spread 3: learnt factors win out of sample. Width 3: the network's stand."""
    narrow, actual, series = _held_out(3.0, 1.0)
    treatment, scores = choose_treatment(narrow, None, actual, series, LEVELS, 4)
    assert treatment == "factors" and scores["factors"] < scores["network"]
    right, actual, series = _held_out(3.0, 3.0)
    treatment, scores = choose_treatment(right, None, actual, series, LEVELS, 4)
    assert treatment == "network" and scores["network"] <= scores["factors"]


def test_a_treatment_that_wins_on_one_series_only_does_not_replace_the_network():
    """Lower held-out WQL from one series' shock is chance, not evidence: the network's quantiles stand."""
    right, actual, series = _held_out(3.0, 3.0, n_series=8)
    wide = 100.0 + _normal_quantiles(len(series), 4, 3.3)  # a little too wide everywhere
    shocked = series == 0
    actual[shocked] += 25.0  # one series leaves the network's interval; the wider one covers it better there
    treatment, scores = choose_treatment(right, wide, actual, series, LEVELS, 4)
    assert scores["mixed"] < scores["network"]  # the lowest held-out WQL, which the rule used to take
    assert treatment == "network"
    # Intervals too narrow on every series: the gain is evidence and the wider treatment is taken.
    narrow, actual, series = _held_out(4.5, 3.0, n_series=60)
    wider = 100.0 + _normal_quantiles(len(series), 4, 4.5)
    treatment, scores = choose_treatment(narrow, wider, actual, series, LEVELS, 4)
    assert treatment != "network" and scores[treatment] < scores["network"]


def _gains_of(per_series_gain: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One window per series at its median, a network 80% interval of width 2, and a "mixed" one narrower by the gains.

    Each series' held-out WQL gain of "mixed" over the network is proportional to its entry of ``per_series_gain``.
    """
    n = len(per_series_gain)
    actual = np.full((n, 1), 10.0)
    network = np.broadcast_to(np.array([9.0, 10.0, 11.0]), (n, 1, 3)).copy()
    mixed = 10.0 + (network - 10.0) * (1.0 - 0.1 * per_series_gain)[:, None, None]
    return network, mixed, actual, np.arange(n)


def test_the_bar_for_a_treatment_rises_as_the_held_out_series_get_few():
    """A paired t of 2.6 over 4 series arises by chance about one time in twenty: the network's quantiles stand."""
    gains = np.array([1.0, 2.0, 1.5, 0.0])  # paired t = 2.63 over 4 series
    network, mixed, actual, series = _gains_of(gains)
    treatment, scores = choose_treatment(network, mixed, actual, series, (0.1, 0.5, 0.9), 1)
    assert scores["mixed"] < scores["network"] and treatment == "network"
    # The same gains over ten times the series are evidence (t = 9.1): a treatment is taken.
    network, mixed, actual, series = _gains_of(np.tile(gains, 10))
    treatment, scores = choose_treatment(network, mixed, actual, series, (0.1, 0.5, 0.9), 1)
    assert treatment != "network" and scores[treatment] < scores["network"]


def test_the_critical_t_is_the_normal_bar_for_many_series_and_higher_for_few():
    assert critical_t(2.0, 4) == pytest.approx(3.307, abs=1e-3)
    assert critical_t(2.0, 20) == pytest.approx(2.140, abs=1e-3)
    assert critical_t(2.0, 100_000) == pytest.approx(2.0, abs=1e-3)
    assert critical_t(2.0, 1) == np.inf


def test_the_bar_for_another_blend_rises_as_the_held_out_series_get_few():
    """Partners worse on every one of 4 series, but unevenly (paired t 2.6): too little to drop the validated default."""
    actual = np.zeros((4, 2))
    scale = np.ones(4)
    median = actual.copy()
    harm = np.array([1.0, 2.0, 1.5, 0.0])[:, None] * np.ones((1, 2))  # each partner's error per series
    partners = [actual + harm, actual + harm]
    assert choose_blend(median, partners, actual, scale, FIXED) == DEFAULTS
    many = np.tile(harm, (10, 1))
    tiled = choose_blend(np.zeros((40, 2)), [many, many], np.zeros((40, 2)), np.ones(40), FIXED)
    assert tiled == {"theta_weight": 0.0, "holt_winters_weight": 0.0}


def test_held_out_wql_of_no_window_is_undefined():
    """No held-out window gives no score (NaN), never a perfect 0 that would win the choice."""
    assert np.isnan(held_out_wql(np.zeros((0, 4, len(LEVELS))), np.zeros((0, 4)), LEVELS))
    assert np.isnan(held_out_wql(np.zeros((2, 4, len(LEVELS))), np.full((2, 4), np.nan), LEVELS))


def test_factors_are_scored_on_series_they_were_not_learnt_from(monkeypatch):
    """Each half's factors come from the other half's series only."""
    import forecaster.model.calibration as calibration

    quantiles, actual, series = _held_out(3.0, 1.0, n_series=10)
    learnt_on = []
    real = calibration.offset_factors

    def spy(q, a, *args):
        learnt_on.append(a.copy())
        return real(q, a, *args)

    monkeypatch.setattr(calibration, "offset_factors", spy)
    choose_treatment(quantiles, None, actual, series, LEVELS, 4)
    assert len(learnt_on) == 2
    halves = [{tuple(row) for row in part} for part in learnt_on]
    assert not halves[0] & halves[1] and len(halves[0]) + len(halves[1]) == len(series)


def test_one_held_out_series_keeps_learnt_factors_out():
    quantiles, actual, series = _held_out(3.0, 1.0, n_series=1)
    treatment, scores = choose_treatment(quantiles, None, actual, series, LEVELS, 4)
    assert treatment == "network" and set(scores) == {"network"}


def test_a_fit_records_its_treatment_and_forecasts_with_it(panel, tmp_path):
    df, _ = panel
    model = fast_model().fit(df)
    calibration = model.state_.calibration
    assert calibration.treatment in calibration.held_out_wql
    assert calibration.held_out_wql[calibration.treatment] <= calibration.held_out_wql["network"]
    assert (calibration.factors is not None) == ("factors" in calibration.treatment)
    assert (calibration.shape > 0) == calibration.treatment.startswith("mixed")
    model.save(tmp_path / "m")
    loaded = type(model).load(tmp_path / "m")
    assert loaded.state_.calibration.treatment == calibration.treatment
    assert loaded.state_.calibration.held_out_wql == pytest.approx(calibration.held_out_wql, rel=1e-12)
    pd.testing.assert_frame_equal(loaded.predict(), model.predict(), check_exact=True)


def test_factors_at_their_cap_warn_that_the_intervals_are_likely_still_too_narrow():
    """An undertrained network's quantiles were stretched to the cap at every step and the 10-90% interval stayed a
    tenth of the errors' width (coverage 0.02 in a backtest), without a word."""
    rng = np.random.default_rng(1)
    ds = pd.date_range("2023-01-01", "2026-12-13", freq="W-SUN")
    cycle = 200 + 40 * np.sin(2 * np.pi * ds.dayofyear / 365.25)
    df = pd.concat([pd.DataFrame({"unique_id": f"s{i}", "ds": ds, "y": cycle + rng.normal(0, 5, len(ds))}) for i in range(6)])
    with pytest.warns(UserWarning, match=r"stretched the network's quantiles to its cap \(20 times") as caught:
        model = Seq2SeqForecaster(horizon=4, max_steps=40, progress=False).fit(df)
    assert (model.state_.calibration.factors == MAX_FACTOR).any()
    capped = next(w for w in caught if "cap" in str(w.message))
    assert "A network trained longer" in str(capped.message) and capped.filename == __file__  # the user's line
