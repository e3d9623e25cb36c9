"""Nothing dated after the origin reaches the encoder or the scaler; future-known covariates do reach the decoder."""

import numpy as np
import pandas as pd
import pytest
from conftest import fast_model, future_frame

from forecaster import LeakageError
from forecaster.data.features import fit_features
from forecaster.data.frequency import normalise_freq
from forecaster.data.panel import build_panel
from forecaster.data.roles import CovariateRoles, encoder_columns
from forecaster.data.validation import Columns, clean_history
from forecaster.data.windows import assemble

ROLES = CovariateRoles(future=("promo",), past=("traffic",), static=("group", "size"))


def _panel(df, spec_from=None):
    frame, _ = clean_history(df, Columns(), ROLES)
    spec_frame, _ = clean_history(df if spec_from is None else spec_from, Columns(), ROLES)
    spec = fit_features(spec_frame, "unique_id", ROLES)  # in a backtest: the fold's training data
    return build_panel(frame, Columns(), ROLES, spec, normalise_freq("MS"), 12, 6)


def _batch(df, origin_offset, spec_from):
    panel = _panel(df, spec_from)
    series = np.arange(len(panel.ids))
    origins = np.full(len(series), panel.last_col - origin_offset)
    return assemble(panel, ROLES, series, origins, 12, 6, "standard", with_target=False)


def test_perturbing_after_origin_leaves_encoder_and_scale_unchanged(panel):
    df, _ = panel
    cutoff = df["ds"].max() - pd.DateOffset(months=10)
    changed = df.copy()
    after = changed["ds"] > cutoff
    changed.loc[after, "y"] = changed.loc[after, "y"] * 100 + 7
    changed.loc[after, "traffic"] = -50.0
    base, moved = _batch(df, 10, df), _batch(changed, 10, df)
    for name in ("past_target", "past_observed", "past_covariates", "loc", "scale", "future_known"):
        np.testing.assert_array_equal(getattr(base, name), getattr(moved, name), err_msg=name)


def test_future_covariate_inside_horizon_reaches_decoder_only(panel):
    df, _ = panel
    cutoff = df["ds"].max() - pd.DateOffset(months=10)
    changed = df.copy()
    inside = (changed["ds"] > cutoff) & (changed["ds"] <= cutoff + pd.DateOffset(months=6))
    changed.loc[inside, "promo"] = 1.0 - changed.loc[inside, "promo"]
    base, moved = _batch(df, 10, df), _batch(changed, 10, df)
    np.testing.assert_array_equal(base.past_covariates, moved.past_covariates)
    assert not np.array_equal(base.future_known, moved.future_known)


def test_changing_future_covariate_changes_forecast_and_after_horizon_is_ignored(fitted, panel):
    df, _ = panel
    base = fitted.predict(future_df=future_frame(df, 6, value=0.0))
    lifted = fitted.predict(future_df=future_frame(df, 6, value=1.0))
    assert not np.allclose(base["y_hat"], lifted["y_hat"])
    longer = fitted.predict(future_df=future_frame(df, 9, value=0.0))
    pd.testing.assert_frame_equal(base, longer)


def test_column_in_two_roles_is_refused(panel):
    df, _ = panel
    with pytest.raises(LeakageError, match="`promo`.*both"):
        fast_model(future_covariates=["promo"], past_covariates=["promo"]).fit(df)


def test_future_df_with_target_or_past_covariate_is_refused(fitted, panel):
    df, _ = panel
    future = future_frame(df, 6)
    with pytest.raises(LeakageError, match="`y`"):
        fitted.predict(future_df=future.assign(y=1.0))
    with pytest.raises(LeakageError, match="`traffic`"):
        fitted.predict(future_df=future.assign(traffic=1.0))


def test_encoder_guard_refuses_future_known_columns():
    with pytest.raises(LeakageError, match="`promo`.*decoder only"):
        encoder_columns(ROLES, ("traffic", "promo"))
    assert encoder_columns(ROLES, ("traffic",)) == ("traffic",)


def test_encoder_block_refuses_panel_with_future_column_as_past(panel):
    df, _ = panel
    panel_ = _panel(df)
    leaky = CovariateRoles(future=("traffic",), past=(), static=())
    with pytest.raises(LeakageError):
        assemble(panel_, leaky, np.array([0]), np.array([panel_.last_col]), 12, 6, "standard", False)


def test_future_df_before_history_end_is_refused(fitted, panel):
    df, _ = panel
    future = future_frame(df, 6)
    future["ds"] = future["ds"] - pd.DateOffset(months=6)
    with pytest.raises(LeakageError, match="at or before the end"):
        fitted.predict(future_df=future)
