"""explain's account in two shapes: each history point's share (by="point") and each (series, step)'s parts
(by="step"), named for what they are, adding up to the forecast a user gets."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import fast_model, future_frame


@pytest.mark.parametrize("values", ["states", "observations"])
def test_the_parts_of_every_series_and_step_add_up_to_the_forecast_predict_returns(panel, values):
    df, _ = panel
    model = fast_model(future_covariates=["promo"], attention_values=values).fit(df)
    future = future_frame(df, 6)
    steps = model.explain(future_df=future, by="step")
    from forecaster.model.account import STEP_PARTS

    names = STEP_PARTS[values]
    assert steps.attrs["parts"] == list(names)
    assert list(steps.columns) == ["unique_id", "ds", "step", *names, "y_hat", "closed_step"]
    np.testing.assert_allclose(steps[steps.attrs["parts"]].sum(axis=1), steps["y_hat"], rtol=1e-9, atol=1e-9)
    assert len(steps) == steps[["unique_id", "step"]].drop_duplicates().shape[0] == df["unique_id"].nunique() * 6
    forecast = model.predict(future_df=future).merge(steps, on=["unique_id", "ds"], suffixes=("", "_account"))
    assert len(forecast) == len(steps)
    np.testing.assert_allclose(steps[list(names)].sum(axis=1), steps["y_hat"], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(forecast["y_hat_account"], forecast["y_hat"], rtol=1e-5, atol=1e-5)
    assert (steps["partners_weighted"] != 0).any()  # the default blend: the partners' part is there, weighted


def test_the_point_shares_summed_over_the_history_are_the_steps_history_part(panel):
    df, _ = panel
    model = fast_model().fit(df)
    points, steps = model.explain(df), model.explain(df, by="step")
    summed = points.groupby(["unique_id", "step"])["contribution"].sum()
    history = steps.set_index(["unique_id", "step"])["history_x_network_weight"]
    pd.testing.assert_series_equal(summed.sort_index(), history.sort_index(), check_names=False)
    # The level part carries the network's blend weight, and says so: it is the window level times that weight.
    assert "window_level_x_network_weight" in steps and "step_baseline" in points  # the old columns, for one release


def test_explain_by_refuses_what_it_does_not_know(panel):
    df, _ = panel
    with pytest.raises(ValueError, match="`by` must be 'point' or 'step'"):
        fast_model().fit(df).explain(df, by="series")
