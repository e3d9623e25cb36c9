"""Attention that explains the forecast: the account adds up, the maps point at what drives the forecast."""

import numpy as np
import pandas as pd
import pytest
from conftest import fast_model, future_frame

from forecaster import Seq2SeqForecaster
from forecaster.datasets import make_panel
from forecaster.model.faithfulness import occlusion
from forecaster.plots import attention_diagnostics, attention_profile, forecast_sources, plot_attention

PARTS = ["step_baseline", "step_covariates", "step_partners"]


def _sums(explanation: pd.DataFrame) -> pd.DataFrame:
    per_step = explanation.groupby(["unique_id", "step"])
    return per_step["contribution"].sum().to_frame().join(per_step[[*PARTS, "y_hat"]].first())


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"linear_skip": False, "n_models": 2},
        {"future_covariates": ["promo"], "static_covariates": ["group", "size"], "theta_weight": 0.2},
    ],
)
def test_the_account_adds_up_to_the_forecast_of_every_step(panel, options):
    df, _ = panel
    model = fast_model(attention_values="observations", **options).fit(df)
    history = pd.concat([df[df["unique_id"] != "S000"], df[df["unique_id"] == "S000"].tail(8)])  # one padded window
    future = future_frame(history, 6) if "future_covariates" in options else None
    forecast = model.predict(df=history, future_df=future).set_index(["unique_id", "ds"])["y_hat"]
    explanation = model.explain(df=history, future_df=future, include_padding=True)
    sums = _sums(explanation)
    total = sums["contribution"] + sums[PARTS].sum(axis=1)
    np.testing.assert_allclose(total, sums["y_hat"], rtol=1e-9, atol=1e-9 * np.abs(sums["y_hat"]).max())
    by_target = explanation.groupby(["unique_id", "ds"])["y_hat"].first()
    np.testing.assert_allclose(by_target.reindex(forecast.index), forecast, rtol=1e-12)
    padded = explanation["padded"]
    assert padded.any() and (explanation.loc[padded, "contribution"] == 0).all()
    if "future_covariates" not in options:
        assert (sums["step_covariates"] == 0).all()
    if options.get("theta_weight"):
        assert (sums["step_partners"] != 0).any()


def test_a_point_share_is_its_weight_times_its_observation_without_the_skip(panel):
    df, _ = panel
    model = fast_model(attention_values="observations", linear_skip=False, seasonal_profile=False, trend_line=False)
    explanation = model.fit(df).explain(df=df, include_padding=False)
    observed = df.set_index(["unique_id", "ds"])["y"]
    values = observed.reindex(pd.MultiIndex.from_arrays([explanation["unique_id"], explanation["ds_history"]])).to_numpy()
    network_share = 1.0 - sum(model._blend_weights().values())  # the partners take the rest
    expected = network_share * explanation["weight"].to_numpy() * np.nan_to_num(values)
    np.testing.assert_allclose(explanation["contribution"], expected, rtol=2e-6, atol=1e-9)


def _seasonal(n_series: int = 12, length: int = 72, seed: int = 0, **extra) -> pd.DataFrame:
    options = dict(trend=0.0, noise=0.0, future_effect=0.0, static=False, short_share=0.0, missing_share=0.0)
    df, _ = make_panel(n_series=n_series, length=length, seed=seed, **{**options, **extra})
    return df


def _peaks(model, df, future=None, top=3) -> list[int]:
    profile = attention_profile(model.explain(df=df, future_df=future), relative_to="target")["mean"]
    return list(profile.sort_values(ascending=False).index[:top])


@pytest.fixture(scope="module")
def seasonal_model():
    df = _seasonal()[["unique_id", "ds", "y"]]
    return Seq2SeqForecaster(horizon=12, input_size=36, max_steps=150, progress=False, attention_values="observations").fit(
        df
    ), df


def test_most_attended_points_move_the_forecast_most_on_a_noise_free_seasonal_panel(seasonal_model):
    """The occlusion check: the "states" design scored 0.11 here, so a bound of 2 tells them apart."""
    model, df = seasonal_model
    result = occlusion(model, df)
    assert result.n_series == 12 and result.ratio > 2.0, result


def test_the_points_with_the_largest_shares_move_the_forecast_most_with_the_defaults():
    """The shares of the default (state) design point at what drives the forecast, where its attention does not have to."""
    df = _seasonal()[["unique_id", "ds", "y"]]
    model = Seq2SeqForecaster(horizon=12, progress=False).fit(df)
    shares = occlusion(model, df, rank_by="contribution")
    assert model.attention_values == "states" and shares.n_series == 12 and shares.ratio >= 3.0, shares


def test_occlusion_names_what_it_ranks_by(seasonal_model):
    model, df = seasonal_model
    with pytest.raises(ValueError, match="rank_by"):
        occlusion(model, df, rank_by="attention")


def _season_share(model, df, season: int) -> float:
    """Mean weight on lags (from the target) that are multiples of the season, over what a uniform map would give."""
    profile = attention_profile(model.explain(df=df), relative_to="target")["mean"]
    on_season = profile.index.to_numpy() % season == 0
    return float(profile[on_season].sum() / profile.sum()) / on_season.mean()


def test_the_profile_of_a_pure_seasonal_panel_peaks_at_the_season(seasonal_model):
    model, df = seasonal_model
    assert _peaks(model, df)[0] % 12 == 0, _peaks(model, df)
    assert _season_share(model, df, 12) > 1.5


def test_a_target_that_copies_one_lag_is_read_at_that_lag():
    rng = np.random.default_rng(3)
    pattern = rng.normal(10.0, 3.0, (10, 5))  # y[t] = y[t - 5] exactly: a period-5 cycle in monthly data
    y = np.tile(pattern, (1, 16))
    times = pd.date_range("2000-01-01", periods=y.shape[1], freq="MS")
    df = pd.DataFrame(
        {"unique_id": np.repeat([f"s{i}" for i in range(10)], y.shape[1]), "ds": np.tile(times, 10), "y": y.ravel()}
    )
    model = Seq2SeqForecaster(
        horizon=5, input_size=20, season_length=5, max_steps=150, progress=False, attention_values="observations"
    ).fit(df)
    assert _peaks(model, df, top=1)[0] % 5 == 0, _peaks(model, df)
    assert _season_share(model, df, 5) > 1.5


def test_a_promotion_shows_in_the_covariates_part_and_the_profile_still_peaks_at_the_season():
    df = _seasonal(future_effect=0.5, static=False)
    model = Seq2SeqForecaster(
        horizon=12, input_size=36, max_steps=200, progress=False, attention_values="observations", future_covariates=["promo"]
    ).fit(df)
    future = future_frame(df, 12)
    future["promo"] = np.tile([1.0, 0.0, 0.0], len(future) // 3)
    explanation = model.explain(future_df=future)
    steps = explanation.groupby(["unique_id", "ds"])["step_covariates"].first().reset_index()
    steps = steps.merge(future, on=["unique_id", "ds"])
    effect = steps.groupby("promo")["step_covariates"].mean()
    assert effect[1.0] - effect[0.0] > 0.25 * df["y"].abs().mean()  # the true lift is 0.5 x the level
    assert _peaks(model, df.groupby("unique_id").tail(60), future, top=1)[0] % 12 == 0


def test_diagnostics_and_plots_report_the_account(seasonal_model):
    model, df = seasonal_model
    explanation = model.explain(df=df, include_padding=True)
    diagnostics = attention_diagnostics(explanation, 12, model=model, df=df)
    assert diagnostics.padded_mass == 0.0 and diagnostics.occlusion_ratio > 2.0
    assert np.isnan(attention_diagnostics(explanation, 12).occlusion_ratio)
    one = explanation[explanation["unique_id"] == "S000"]
    points, parts = forecast_sources(one)
    assert points.sum() + parts["baseline"] + parts["covariates"] + parts["partners"] == pytest.approx(parts["forecast"])
    fig = plot_attention(one)
    bars = fig.axes[2].patches
    assert len(bars) == one["ds_history"].nunique()
    heights = np.array([bar.get_height() for bar in bars])
    np.testing.assert_allclose(np.sort(heights), np.sort(points.to_numpy()))


@pytest.mark.parametrize("refit", [True, False])
def test_backtest_reports_the_occlusion_ratio_and_the_account(tmp_path, refit):
    from forecaster import backtest

    df = _seasonal(n_series=6, length=60)[["unique_id", "ds", "y"]]
    model = Seq2SeqForecaster(horizon=12, input_size=24, max_steps=60, progress=False, attention_values="observations")
    result = backtest(model, df, n_windows=2, refit=refit, baselines=("seasonal_naive",), progress=False)
    check = result.settings["occlusion"]
    assert check["n_series"] == 6 and np.isfinite(check["ratio"])
    assert {"contribution", "step_partners", "y_hat"} <= set(result.attention.columns)
    result.to_report(tmp_path / "report")
    text = (tmp_path / "report" / "report.md").read_text()
    assert f"occlusion ratio: {check['ratio']:.2f}" in text and "exact share of the forecast" in text
    assert np.isfinite(check["share_ratio"]) and f"the shares' occlusion ratio: {check['share_ratio']:.2f}" in text


@pytest.mark.parametrize(
    "options", [{}, {"linear_skip": True, "n_models": 2}, {"future_covariates": ["promo"], "static_covariates": ["group"]}]
)
def test_the_account_equals_the_network_median_computed_without_it(panel, options):
    """Not circular: the network's own median (its forward pass, inverse-scaled) against the account's total."""
    import torch

    from forecaster.data.windows import assemble
    from forecaster.model.training import to_tensors

    df, _ = panel
    model = fast_model(attention_values="observations", theta_weight=0.0, holt_winters_weight=0.0, **options).fit(df)
    future = future_frame(df, 6) if "future_covariates" in options else None
    fitted, panel_, _, memo = model._source(None, future)
    forecast = model._forecast_ends(fitted, panel_, memo)
    state = model.state_
    batch = assemble(panel_, state.roles, forecast.series, forecast.origins, state.input_size, 6, state.scaler, False)
    with torch.inference_mode():
        scaled, _ = model.network_(**to_tensors(batch, "cpu"))
    median = scaled[..., state.median_index].double().numpy() * batch.scale[:, None] + batch.loc[:, None]
    np.testing.assert_allclose(forecast.account.total, median, rtol=2e-5, atol=1e-6 * np.abs(median).max())


def test_partners_read_each_window_up_to_its_own_origin_only():
    """Per-window origins give the forecasts of histories cut at those origins (the partners of refit=False backtests)."""
    from forecaster.partners.blend import PARTNERS, partner_distributions

    rng = np.random.default_rng(7)
    y = 50 + np.cumsum(rng.normal(0, 1, (3, 60)), axis=1) + 5 * np.sin(np.arange(60) / 12 * 2 * np.pi)
    y[1, :10] = np.nan
    first = np.array([0, 10, 0])
    fits = [partner.fit for partner in PARTNERS.values()]
    series, origins = np.array([0, 0, 1, 2]), np.array([59, 40, 45, 30])
    together = partner_distributions(fits, y, first, origins, 6, 12, 36, series=series)
    for k, (row, origin) in enumerate(zip(series, origins, strict=True)):
        cut = np.where(np.arange(60) <= origin, y[row], 1e9)[None, :]  # anything after the origin is poison
        alone = partner_distributions(fits, cut, first[row : row + 1], origin, 6, 12, 36)
        for both, one in zip(together, alone, strict=True):
            np.testing.assert_allclose(both.mean[k], one.mean[0], rtol=1e-12)
            if both.distribution is not None:  # Holt-Winters' spread reads nothing after the origin either
                np.testing.assert_allclose(both.distribution.spread[k], one.distribution.spread[0], rtol=1e-12)
                assert both.distribution.log[k] == one.distribution.log[0]


def test_the_occlusion_check_of_a_count_series_leaves_its_integer_column_untouched(panel):
    """Counts held as integers: the occluded points take each series' mean, a float. Written into the integer column,
    pandas warned ("incompatible dtype", an error from pandas 3)."""
    import warnings

    df, _ = panel
    whole = df.groupby("unique_id")["y"].transform(lambda y: y.notna().all())
    counts = df[whole.astype(bool)].assign(y=lambda d: d["y"].round().clip(lower=0).astype("int64"))
    model = fast_model(max_steps=5).fit(counts)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        result = occlusion(model, counts)
    assert np.isfinite(result.ratio) and counts["y"].dtype == "int64"
