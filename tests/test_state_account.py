"""The default (state) design's account: every history point's share, by integrated gradients, and the step parts.

They add up to the forecast, and each is what it says: the shares are what Captum's integrated gradients give.
"""

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import fast_model, future_frame

from forecaster.plots import CAUTION, GRADIENT_SHARES, OBSERVATION_SHARES, account_caption, forecast_sources

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
def test_the_shares_add_up_to_the_unchanged_forecast(panel, options):
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
    assert (sums["step_head"] == 0).all()  # nothing left unattributed
    shares = explanation[~explanation["padded"]].groupby(["unique_id", "step"])["contribution"]
    assert (shares.apply(lambda c: (c != 0).sum()) >= 2).all()  # the head's part is over the points, with or without skip
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


def _window(model, frame):
    """The network's inputs for each series' last window of ``frame``, and the panel's scaling."""
    from forecaster.data.windows import assemble
    from forecaster.model.training import to_tensors

    state, panel_ = model.state_, model._source(frame, None)[1]
    rows = np.arange(len(panel_.ids))
    batch = assemble(panel_, state.roles, rows, np.full(len(rows), panel_.last_col), state.input_size, 6, state.scaler, False)
    return panel_.ids, batch, to_tensors(batch, "cpu")


def _scaling(y: torch.Tensor, observed: torch.Tensor, scaler: str) -> tuple[torch.Tensor, torch.Tensor]:
    """The window scalers of ``forecaster.data.scaling``, written again in torch (observed values only)."""
    count = observed.sum(1, keepdim=True)
    if scaler == "standard":
        loc = (y * observed).sum(1, keepdim=True) / count
        return loc, torch.sqrt((((y - loc) * observed) ** 2).sum(1, keepdim=True) / count)
    if scaler == "meanabs":
        return torch.zeros_like(count), (y.abs() * observed).sum(1, keepdim=True) / count
    values = torch.where(observed > 0, y, torch.nan)
    q25, q50, q75 = torch.nanquantile(values, torch.tensor([0.25, 0.5, 0.75], dtype=y.dtype), dim=1, keepdim=True)
    return q50, (q75 - q25) / 1.349


@pytest.mark.parametrize(
    "options",
    [{"linear_skip": True}, {"linear_skip": False}, {"n_models": 3}, {"scaler": "meanabs"}, {"scaler": "robust"}],
)
def test_the_shares_are_integrated_gradients_as_captum_computes_them(panel, options):
    """Independent of the account's code: Captum integrates the gradient of the forecast, in target units and through
    the window's scaling, along the straight path from the flat history at the window's level to the window."""
    from captum.attr import IntegratedGradients

    df, _ = panel
    model = fast_model(theta_weight=0.0, holt_winters_weight=0.0, **options).fit(df)
    explanation = model.explain(include_padding=True)
    ids, batch, inputs = _window(model, None)
    network, median = model.network_, model.state_.median_index
    observed = inputs["past_observed"].double()
    scaled = inputs.pop("past_target").double()
    y = torch.as_tensor(batch.loc)[:, None] + torch.as_tensor(batch.scale)[:, None] * scaled * observed  # target units
    flat = torch.as_tensor(batch.loc)[:, None].expand_as(y).clone()
    names = list(inputs)
    for step in (1, 6):

        def forecast_at_step(values, *others, step=step):  # Captum repeats the other inputs along the path
            given = dict(zip(names, others, strict=True))
            loc, scale = _scaling(values, given["past_observed"].double(), model.scaler)
            x = ((values - loc) / scale * given["past_observed"]).float()
            median_scaled = network(past_target=x, **given)[0][:, step - 1, median]
            return loc[:, 0] + scale[:, 0] * median_scaled.double()

        integrated = IntegratedGradients(forecast_at_step)
        others = tuple(inputs.values())
        attributions = integrated.attribute(y, baselines=flat, additional_forward_args=others, n_steps=64)
        expected = attributions.numpy()
        rows = explanation[explanation["step"] == step].sort_values(["unique_id", "lag"], ascending=[True, False])
        got = np.stack([rows.loc[rows["unique_id"] == uid, "contribution"].to_numpy() for uid in ids])
        np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-4 * np.abs(expected).max())
        assert np.abs(expected).max() > 0


def test_plots_and_reports_say_which_account_they_show(panel):
    df, _ = panel
    for values, caption in (("states", GRADIENT_SHARES), ("observations", OBSERVATION_SHARES)):
        explanation = fast_model(attention_values=values).fit(df).explain()
        assert account_caption(explanation) == caption
        assert account_caption(explanation[explanation["step"] == 1]) == caption  # a part of the frame says it too
        points, parts = forecast_sources(explanation[explanation["unique_id"] == "S001"])
        assert parts["head"] == 0 and (points != 0).sum() >= 2
        assert points.sum() + parts["baseline"] + parts["covariates"] + parts["partners"] == pytest.approx(
            parts["forecast"], rel=1e-9
        )
    logged = fast_model(log_target=True).fit(df.assign(y=df["y"].abs())).explain()
    assert "contribution" not in logged and account_caption(logged) == CAUTION and "log_target" in CAUTION


def test_the_baseline_is_the_window_level(panel):
    """The path starts at the window's level: everything the network adds to it is some point's share."""
    df, _ = panel
    model = fast_model(theta_weight=0.0, holt_winters_weight=0.0).fit(df)
    explanation = model.explain()
    baseline = explanation.groupby(["unique_id", "step"])["step_baseline"].first()
    ids, batch, _ = _window(model, None)
    got = np.stack([baseline.loc[uid].sort_index().to_numpy() for uid in ids])
    expected = np.repeat(batch.loc[:, None], 6, axis=1)  # up to the float32 forward pass's rounding
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6 * np.abs(batch.loc).max())


def test_shares_that_do_not_add_up_are_refused_not_hidden(panel, monkeypatch):
    """Scale parts that do not sum to one (a scaler the account misreads) leave a gap: an error, not a quiet baseline."""
    from forecaster.model import account

    df, _ = panel
    model = fast_model().fit(df)
    right = account.scale_derivatives

    def misread(history, scaler):
        dloc, spread, regular = right(history, scaler)
        return dloc, 2.0 * spread, regular

    monkeypatch.setattr(account, "scale_derivatives", misread)
    with pytest.raises(ArithmeticError, match="shares miss the network"):
        model.explain()


def test_a_wrong_account_is_refused_not_settled():
    from forecaster.model.account import Account

    b, h, t = 2, 3, 4
    account = Account(np.ones((b, h, t)), np.ones((b, h)), np.zeros((b, h)), np.zeros((b, h)))
    median = account.total + 1e-9  # rounding: moved into the baseline
    np.testing.assert_allclose(account.settled(median).total, median, rtol=0, atol=1e-12)
    with pytest.raises(ArithmeticError, match="miss"):
        account.settled(account.total * 1.01)


def test_a_window_whose_scale_fell_back_has_no_shares_and_still_adds_up(panel):
    """A window that stays flat for the whole encoder (earlier history varies, so it is no constant series)."""
    df, _ = panel
    model = fast_model(theta_weight=0.0, holt_winters_weight=0.0).fit(df)
    flat = df.copy()
    last = flat.groupby("unique_id")["ds"].transform("max")
    window = (flat["unique_id"] == "S001") & (flat["ds"] > last - pd.DateOffset(months=model.state_.input_size))
    flat.loc[window, "y"] = 50.0
    explanation = model.explain(df=flat, include_padding=True)
    sums = _sums(explanation)
    np.testing.assert_allclose(sums["contribution"] + sums[PARTS].sum(axis=1), sums["y_hat"], rtol=1e-9)
    one = explanation[explanation["unique_id"] == "S001"]
    assert (one["contribution"] == 0).all() and (explanation.loc[explanation["unique_id"] != "S001", "contribution"] != 0).any()
    forecast = model.predict(df=flat).set_index(["unique_id", "ds"])["y_hat"]
    np.testing.assert_allclose(one.groupby("ds")["y_hat"].first(), forecast.loc["S001"], rtol=1e-12)


def test_the_shares_do_not_depend_on_how_the_windows_are_chunked(panel, monkeypatch):
    from forecaster.model import inference, network

    df, _ = panel
    model = fast_model(n_models=2).fit(df)
    whole = model.explain()["contribution"].to_numpy()
    monkeypatch.setattr(network, "GRADIENT_CHUNK", 3)
    monkeypatch.setattr(inference, "CHUNK", 5)
    model._cache = None
    np.testing.assert_allclose(model.explain()["contribution"].to_numpy(), whole, rtol=1e-5, atol=1e-6 * np.abs(whole).max())
