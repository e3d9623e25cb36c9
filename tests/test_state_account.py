"""The default (state) design's account: the paths that reach each forecast add up to it, and each is what it says."""

import numpy as np
import pandas as pd
import pytest
from conftest import fast_model, future_frame

from forecaster.plots import PATHS, account_caption, forecast_sources

PARTS = ["step_baseline", "step_covariates", "step_partners", "step_head"]


def _sums(explanation: pd.DataFrame) -> pd.DataFrame:
    per_step = explanation.groupby(["unique_id", "step"])
    return per_step["contribution"].sum().to_frame().join(per_step[[*PARTS, "y_hat"]].first())


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"n_models": 3},
        {"n_models": 2, "linear_skip": False},
        {"future_covariates": ["promo"], "static_covariates": ["group", "size"], "theta_weight": 0.2},
    ],
)
def test_the_paths_add_up_to_the_unchanged_forecast(panel, options):
    df, _ = panel
    model = fast_model(**options).fit(df)
    future = future_frame(df, 6, value=1.0) if "future_covariates" in options else None
    forecast = model.predict(future_df=future).set_index(["unique_id", "ds"])["y_hat"]
    explanation = model.explain(future_df=future, include_padding=True)
    sums = _sums(explanation)
    total = sums["contribution"] + sums[PARTS].sum(axis=1)
    scale = np.abs(sums["y_hat"]).max()
    np.testing.assert_allclose(total, sums["y_hat"], rtol=1e-9, atol=1e-9 * scale)
    by_target = explanation.groupby(["unique_id", "ds"])["y_hat"].first()
    np.testing.assert_allclose(by_target.reindex(forecast.index), forecast, rtol=1e-12)
    assert (sums["step_head"] != 0).all()  # the head's part is there, not hidden in the baseline
    if options.get("linear_skip", True):
        assert (explanation["contribution"] != 0).any()
    else:
        assert (explanation["contribution"] == 0).all()
    if "future_covariates" not in options:
        assert (sums["step_covariates"] == 0).all()


@pytest.mark.parametrize("n_models", [1, 2, 3])
def test_the_covariates_part_is_the_forecast_minus_the_forecast_at_their_training_mean(panel, n_models):
    """Independent of the account's code: two predicts, covariates as given and at their training mean."""
    df, _ = panel
    model = fast_model(future_covariates=["promo"], holt_winters_weight=0.0, n_models=n_models).fit(df)
    mean = model.state_.features.numeric["promo"].mean
    given, at_mean = future_frame(df, 6, value=1.0), future_frame(df, 6, value=mean)
    explanation = model.explain(future_df=given)
    effect = explanation.groupby(["unique_id", "ds"])["step_covariates"].first()
    moved = model.predict(future_df=given).set_index(["unique_id", "ds"])["y_hat"]
    still = model.predict(future_df=at_mean).set_index(["unique_id", "ds"])["y_hat"]
    difference = (moved - still).reindex(effect.index)
    np.testing.assert_allclose(effect, difference, rtol=1e-4, atol=1e-4 * np.abs(moved).max())
    assert np.abs(effect).max() > 0


def test_the_skip_share_of_a_point_is_exact(panel):
    """The linear skip's term for the last history point: its weight x the point's distance from the window level."""
    from forecaster.data.windows import assemble

    df, _ = panel
    model = fast_model(theta_weight=0.0, holt_winters_weight=0.0, seasonal_profile=False, trend_line=False).fit(df)
    one = df[df["unique_id"] == "S001"]
    assert np.isfinite(one["y"].iloc[-1])
    explanation = model.explain(df=one)
    share = explanation[explanation["ds_history"] == one["ds"].max()].sort_values("step")["contribution"]
    state, panel_ = model.state_, model._panel_for(one, None)[0]
    ends = model._forecast_ends(panel_)
    batch = assemble(panel_, state.roles, ends.series, ends.origins, state.input_size, 6, state.scaler, False)
    weight = model.network_.members[0].skip.weight.detach().double().numpy()[:, -1]
    expected = weight * (one["y"].iloc[-1] - batch.loc[0])
    np.testing.assert_allclose(share.to_numpy(), expected, rtol=1e-4, atol=1e-6 * batch.scale[0])
    assert np.abs(expected).max() > 0


def test_plots_and_reports_say_which_account_they_show(panel):
    df, _ = panel
    model = fast_model().fit(df)
    explanation = model.explain()
    assert account_caption(explanation) == PATHS
    points, parts = forecast_sources(explanation[explanation["unique_id"] == "S001"])
    assert parts["head"] != 0
    assert points.sum() + parts["baseline"] + parts["covariates"] + parts["partners"] + parts["head"] == pytest.approx(
        parts["forecast"], rel=1e-9
    )


def test_the_baseline_is_the_window_level_and_the_skip_bias(panel):
    """One member: what the account moves into the baseline besides those is float rounding, not a part."""
    from forecaster.data.windows import assemble

    df, _ = panel
    model = fast_model(theta_weight=0.0, holt_winters_weight=0.0).fit(df)
    explanation = model.explain()
    baseline = explanation.groupby(["unique_id", "step"])["step_baseline"].first()
    state, panel_ = model.state_, model._panel_for(None, None)[0]
    ends = model._forecast_ends(panel_)
    batch = assemble(panel_, state.roles, ends.series, ends.origins, state.input_size, 6, state.scaler, False)
    bias = model.network_.members[0].skip.bias.detach().double().numpy()
    expected = batch.loc[:, None] + batch.scale[:, None] * bias[None, :]
    ids = panel_.ids[ends.series]
    got = np.stack([baseline.loc[uid].sort_index().to_numpy() for uid in ids])
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())


def test_a_wrong_account_is_refused_not_settled():
    from forecaster.model.account import Account

    b, h, t = 2, 3, 4
    account = Account(np.ones((b, h, t)), np.ones((b, h)), np.zeros((b, h)), np.zeros((b, h)), np.ones((b, h)))
    median = account.total + 1e-9  # rounding: moved into the baseline
    np.testing.assert_allclose(account.settled(median).total, median, rtol=0, atol=1e-12)
    with pytest.raises(ArithmeticError, match="miss"):
        account.settled(account.total * 1.01)
