"""From a training panel to a training job: the windows, the step budget, early stopping, loss weights."""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np

from ..callers import user_stacklevel
from ..data.decomposition import SEASONAL_CHANNELS, TREND_CHANNELS
from ..data.features import FeatureSpec, static_width
from ..data.panel import Panel
from ..data.roles import CovariateRoles
from ..data.scaling import naive_error_table
from ..data.windows import admissible_origins, assemble
from ..partners.blend import default_weights
from .budget import FINE_TUNE_CHECKS, FINE_TUNE_PATIENCE, use_early_stopping
from .calibration import Calibration, HoldOut, calibrate, plan_holdout
from .inference import history_kept, run_network, target_values
from .intervals import capped_note
from .members import TrainingJob
from .network import Ensemble, NetworkConfig
from .params import blend_weights, explicit_blend_weights, has_future_covariates, needs_calibration
from .partner_shift import partner_shift
from .resolve import architecture
from .state import FittedState
from .training import TrainConfig


def network_config(
    panel: Panel, roles: CovariateRoles, features: FeatureSpec, quantiles: tuple[float, ...], input_size: int, params: dict
) -> NetworkConfig:
    """The network's shapes (from the panel and encoders) and sizes (from the estimator's parameters)."""
    decomposition = panel.decomposition
    return NetworkConfig(
        input_size=input_size,
        past_features=panel.encoder_features,
        future_features=panel.decoder_features,
        static_features=static_width(roles.static, features),
        n_outputs=len(quantiles),
        median_index=quantiles.index(0.5),
        seasonal_channels=SEASONAL_CHANNELS * bool(decomposition is not None and decomposition.seasonal),
        trend_channels=TREND_CHANNELS * bool(decomposition is not None and decomposition.trend),
        future_covariates=panel.future.shape[2],
        **architecture(params),
    )


def minimum_history(input_size: int, horizon: int) -> int:
    """Periods of history a training window needs at least: half the shorter of input and horizon, one at least."""
    return max(1, min(input_size, horizon) // 2)


def training_job(
    panel: Panel,
    roles: CovariateRoles,
    config: NetworkConfig,
    plan,
    device: str,
    params: dict,
    n_windows: int | None = None,
    learning_rate_scales: dict | None = None,
) -> TrainingJob:
    """Training windows (all admissible origins) and, with early stopping, the last horizon held out in time.

    ``plan`` (a :class:`~forecaster.model.plan.FitPlan`) gives the levels, the season and the step budget; ``params``
    are the estimator's parameters. A plan that starts from the prior has ``learning_rate_scales`` (per weight, its
    share of the learning rate; ``prior.learning_rate_scales``) and early stopping with the held-out windows scored
    from step 0 on (on unless ``early_stopping=False``). ``n_windows``: the training windows of the whole panel when
    ``panel`` is a sample of it (a Dask fit streams the windows from every partition): the step budget and the
    automatic early stopping are sized to it.
    """
    quantiles, season_length = plan.quantiles, plan.units["season_length"]
    input_size, horizon = config.input_size, config.horizon
    min_history = minimum_history(input_size, horizon)
    end_col = np.full(len(panel.ids), panel.last_col)
    validation = None
    naive_table = naive_error_table(panel.y, season_length, panel.first_col) if params["loss_scale"] == "seasonal_naive" else None
    all_series, all_origins = admissible_origins(panel, input_size, horizon, end_col, min_history)
    batch_size = params["batch_size"]
    prior = plan.start == "prior"
    windows = len(all_series) if n_windows is None else n_windows
    max_steps = plan.steps(params, windows)
    early = use_early_stopping(params["early_stopping"], max_steps, batch_size, windows)
    if prior and params["early_stopping"] is None:
        early = True
    holdout = plan_holdout(panel, horizon, min_history, early, params["random_state"]) if needs_calibration(params) else None
    if early and holdout is None:  # early stopping holds out the last horizon of every series
        holdout = HoldOut(np.arange(len(panel.ids)), 1)
    series, origins = all_series, all_origins
    if holdout is not None:
        series, origins = admissible_origins(
            panel, input_size, horizon, end_col - holdout.cut(len(panel.ids), horizon), min_history
        )
        if len(series) == 0:  # too short to spare any window: train on all of them, uncalibrated
            series, origins, holdout = all_series, all_origins, None
    at_end = all_origins == panel.last_col - horizon
    if early and holdout is not None and at_end.any():
        validation = assemble(
            panel, roles, all_series[at_end], all_origins[at_end], input_size, horizon, params["scaler"], True, naive_table
        )
    if len(series) == 0:
        raise ValueError("No training window fits in the data: the series are too short for `horizon`; lower it.")
    train_config = TrainConfig(
        max_steps=max_steps,
        batch_size=batch_size,
        learning_rate=float(params["learning_rate"]),
        quantiles=quantiles,
        early_stopping=validation is not None,
        progress=params["progress"],
        device=device,
        evaluate_start=prior,
        learning_rate_scales=learning_rate_scales,
        **({"eval_every": max(1, max_steps // FINE_TUNE_CHECKS), "patience": FINE_TUNE_PATIENCE} if prior else {}),
    )
    refit = params["refit_on_full"] and validation is not None
    return TrainingJob(
        panel,
        roles,
        series,
        origins,
        validation,
        config,
        train_config,
        params["scaler"],
        params["num_threads"],
        full_series=all_series if refit else None,
        full_origins=all_origins if refit else None,
        naive_table=naive_table,
        holdout=holdout,
    )


def calibrated(
    network: Ensemble,
    state: FittedState,
    panel: Panel,
    holdout: HoldOut | None,
    params: dict,
    device: str,
    covariates_read: bool = True,
) -> FittedState:
    """``state`` with the calibration learnt from the fitted network's forecasts of the held-out windows.

    The windows come from the training panel, whose targets end at the training end: nothing
    after it is read (a backtest fold calibrates on its own training data). ``covariates_read`` False: the network
    reads none of the declared covariates (the prior a covariate check kept), so the partners start from the weights
    of a fit without future-known covariates.
    """
    if holdout is None or len(holdout.series) == 0:
        return state
    series, origins = holdout.windows(panel)
    inside = origins >= panel.first_col[series]  # a window needs history (early stopping holds out every series)
    series, origins = series[inside], origins[inside]
    if len(series) == 0:
        return state
    values, _, _ = run_network(network, state, panel, series, origins, device)
    target, medians = target_values(panel, state), values[:, :, state.median_index]
    blended = covariates_read and any(w is None or w > 0.0 for w in explicit_blend_weights(params).values())
    shift = partner_shift(network, state, panel, target, series, origins, medians, device, blended)
    calibration = calibrate(
        values,
        target,
        panel,
        series,
        origins,
        state.quantiles,
        state.median_index,
        state.season_length,
        history_kept(state.input_size, panel.decomposition),
        explicit_blend_weights(params),
        default_weights(covariates_read and has_future_covariates(params)),
        partner_week=state.partner_week,
        shift=shift,
    )
    note = capped_note(calibration.factors)
    if note is not None:
        warnings.warn(note, UserWarning, stacklevel=user_stacklevel())
    return replace(state, calibration=calibration)


def with_blend_recorded(state: FittedState, params: dict) -> FittedState:
    """``state``, with the blend its forecasts use recorded where the fit held no windows out.

    Those weights are the defaults without future-known covariates and 0 with them (a fit with covariates checks a
    partner on held-out windows before blending it in).

    A model file then carries its weights, so defaults chosen later cannot change its forecasts.
    """
    if state.calibration is not None:
        return state
    return replace(state, calibration=Calibration(blend=blend_weights(params), factors=None, n_windows=0))
