"""Checks of a parsed model file across its keys, before anything is allocated from it.

The parameters must be ones ``check_params`` accepts, the sizes must stay within the bounds, and the parts
of the fitted state must agree with each other and with the parameters that ``predict`` reads.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..._version import __version__
from ...data.features import static_width
from ...data.frequency import calendar_features, normalise_freq
from ...data.roles import CovariateRoles
from ...partners.blend import PARTNERS
from ..params import CONSTRAINTS, DEFAULTS, MAX_WINDOW_CELLS, blend_weights
from ..resolve import architecture, floor_rule, partner_week, partners_follow
from ..state import FittedState
from .layout import CONFIG, HISTORY, Invalid
from .migration import PARAM_DEFAULTS, check_as_written


def estimator_from_params(cls, params: dict[str, Any]):
    """The estimator with the file's parameters, refused unless ``check_params`` accepts them."""
    _refuse_unknown(params, ("horizon",))
    model = cls(**{**PARAM_DEFAULTS, **params})
    return _checked(model.get_params(), model)


def complete_params(params: dict[str, Any]) -> dict[str, Any]:
    """The file's parameters completed as :func:`estimator_from_params` completes them (the values of files that
    predate a parameter, ``migration.PARAM_DEFAULTS``, then the estimator's defaults from the parameter table), refused
    unless ``check_params`` accepts them: a model file read without an estimator."""
    _refuse_unknown(params, ("horizon",))
    complete = {**DEFAULTS, **PARAM_DEFAULTS, **params}
    return _checked(complete, complete)


def _refuse_unknown(params: dict[str, Any], required: tuple[str, ...]) -> None:
    """Refuse a parameter this version does not know, or a missing one of ``required``."""
    unknown = [name for name in params if name not in CONSTRAINTS]
    if unknown:
        raise Invalid(f"`params.{unknown[0]}` in {CONFIG} is not a parameter of this forecaster ({__version__}).")
    missing = [name for name in required if name not in params]
    if missing:
        raise Invalid(f"`params.{missing[0]}` is missing from {CONFIG}.")


def _checked(values: dict[str, Any], result):
    """``result`` once ``values`` pass ``check_params`` and name valid covariate roles (else :class:`Invalid`)."""
    try:
        # A model fitted on a GPU loads on a machine without one (it runs on the CPU), so availability is not checked.
        # An unset weight counts as the fits that wrote model files counted it (``migration``); the blend the file's
        # forecasts resolve is checked against its recorded one (``_check_calibration``).
        check_as_written({**values, "device": "cpu" if values["device"] == "cuda" else values["device"]})
        CovariateRoles.from_params(values)
    except (TypeError, ValueError) as error:
        raise Invalid(f"`params` in {CONFIG}: {error}") from None
    return result


def check_bounds(fitted: dict[str, Any]) -> None:
    """Bounds across keys, before anything is allocated."""
    network = fitted["network"]
    members = fitted.get("n_members", 1)
    cells = network["input_size"] * network["horizon"] * members
    if cells > MAX_WINDOW_CELLS:
        raise Invalid(
            f"`fitted.network.input_size` x `fitted.network.horizon` x `fitted.n_members` in {CONFIG} is {cells}; "
            f"at most {MAX_WINDOW_CELLS} is allowed."
        )
    ends = fitted["training_end"]
    if len(ends["ds"]) != len(ends["ids"] if isinstance(ends["ids"], list) else ends["ids"]["values"]):
        raise Invalid(f"`fitted.training_end.ids` and `fitted.training_end.ds` in {CONFIG} differ in length.")
    try:
        pd.to_datetime(ends["ds"])
    except (ValueError, TypeError) as error:
        raise Invalid(f"`fitted.training_end.ds` in {CONFIG} holds a value that is not a timestamp ({error}).") from None


def _check_calibration(state: FittedState, params: dict[str, Any]) -> None:
    """The calibration names known partners whose weights, as the forecast resolves them, sum to at most 1,
    and has one factor per (step, level), 1 at the median."""
    calibration = state.calibration
    if calibration is None:
        return
    unknown = sorted(set(calibration.blend) - set(PARTNERS))
    if unknown or sum(blend_weights(params, calibration.blend).values()) > 1.0 + 1e-9:
        raise Invalid(
            f"`fitted.calibration.blend` in {CONFIG} must give partners of {sorted(PARTNERS)} weights summing to at most 1."
        )
    shape = (state.network.horizon, len(state.quantiles))
    median = state.quantiles.index(0.5)
    if calibration.factors is not None and (
        calibration.factors.shape != shape or not np.all(calibration.factors[:, median] == 1.0)
    ):
        raise Invalid(
            f"`fitted.calibration.factors` in {CONFIG} must be {shape[0]} rows (steps) of {shape[1]} factors (levels), "
            "1 at the median."
        )


def check_agreement(state: FittedState, params: dict[str, Any]) -> None:
    """The parts of the fitted state agree with each other and with the parameters ``predict`` reads."""
    net, levels = state.network, state.quantiles
    if list(levels) != sorted(set(levels)) or 0.5 not in levels:
        raise Invalid(f"`fitted.quantiles` in {CONFIG} must be distinct increasing levels including 0.5; got {list(levels)}.")
    agree = [
        ("fitted.network.n_outputs", net.n_outputs, "the number of `fitted.quantiles`", len(levels)),
        ("fitted.network.median_index", net.median_index, "the position of 0.5 in `fitted.quantiles`", levels.index(0.5)),
        ("fitted.network.input_size", net.input_size, "`fitted.input_size`", state.input_size),
        ("params.horizon", params["horizon"], "`fitted.network.horizon`", net.horizon),
    ]
    for key, value, what, expected in agree:
        if value != expected:
            raise Invalid(f"`{key}` in {CONFIG} is {value!r}, but {what} is {expected!r}.")
    _check_params_match_state(state, params)
    _check_calibration(state, params)
    if params["quantiles"] is not None and not {float(q) for q in params["quantiles"]} <= set(levels):
        raise Invalid(f"`params.quantiles` in {CONFIG} lists levels the network does not output ({list(levels)}).")
    roles = state.roles
    try:
        CovariateRoles.from_arguments(
            roles.future, roles.past, roles.static, (params["id_col"], params["time_col"], params["target_col"])
        )
    except (TypeError, ValueError) as error:
        raise Invalid(f"`fitted.roles` in {CONFIG}: {error}") from None
    spec = state.features
    numeric = set(roles.past) | set(roles.future) | {s for s in roles.static if s in spec.numeric}
    categorical = {s for s in roles.static if s not in spec.numeric}
    if set(spec.numeric) != numeric or set(spec.categories) != categorical:
        raise Invalid(f"`fitted.features` in {CONFIG} does not encode exactly the covariates of `fitted.roles`.")
    for name, values in spec.categories.items():
        labels = np.empty(len(values), dtype=object)
        labels[:] = values
        if not pd.Index(labels).is_unique:
            raise Invalid(f"`fitted.features.categories.{name}` in {CONFIG} lists a category twice.")
    try:
        offset = normalise_freq(state.freq)
        calendar = calendar_features(pd.date_range("2001-01-01", periods=1, freq=offset), offset).shape[1]
    except Exception as error:  # noqa: BLE001 - pandas raises several types for unusable offsets
        raise Invalid(f"`fitted.freq` in {CONFIG}: {error}") from None
    decomposition = 2 * (state.seasonal_profile and state.season_length >= 2) + int(state.trend_line)
    widths = [
        ("static_features", net.static_features, static_width(roles.static, spec)),
        ("past_features", net.past_features, len(roles.past) + calendar + decomposition),
        ("future_features", net.future_features, len(roles.future) + calendar + decomposition),
    ]
    for key, value, expected in widths:
        if value != expected:
            raise Invalid(
                f"`fitted.network.{key}` in {CONFIG} is {value}, but the covariates, calendar and decomposition give {expected}."
            )
    history = state.history
    needed = {params["id_col"], params["time_col"], params["target_col"], *roles.all}
    if set(history.columns) != needed:
        raise Invalid(f"`fitted.history_columns` in {CONFIG} must be the columns {sorted(needed)}; got {list(history.columns)}.")
    if history[params["time_col"]].dtype != np.dtype("datetime64[ns]") or not pd.api.types.is_float_dtype(
        history[params["target_col"]]
    ):
        raise Invalid(f"The time and target columns of `{HISTORY}` must hold naive timestamps and floats.")
    if state.tz is not None:
        mode, _, zone = state.tz.partition(":")
        try:
            if mode not in ("wall", "utc"):
                raise ValueError("it must be 'wall:<zone>' or 'utc:<zone>'")
            pd.Timestamp("2001-01-01").tz_localize(zone)
        except Exception as error:  # noqa: BLE001 - unknown zones raise several types
            raise Invalid(f"`fitted.tz` in {CONFIG} is {state.tz!r}: {error}") from None


def _check_params_match_state(state: FittedState, params: dict[str, Any]) -> None:
    """The parameters describe the fitted network: architecture, window, season, frequency and target units.

    A config whose parameters were edited (and its checksums recomputed) would otherwise load with
    ``get_params()`` describing a model other than the one that forecasts.
    """

    for name, value in architecture(params).items():
        if getattr(state.network, name) != value:
            raise Invalid(
                f"`params` in {CONFIG} ask for {name}={value!r}, but the fitted network has {getattr(state.network, name)!r}."
            )
    fitted = {
        "input_size": state.input_size,
        "season_length": state.season_length,
        "log_target": state.log_target,
        "scaler": state.scaler,
        "seasonal_profile": state.seasonal_profile,
        "trend_line": state.trend_line,
    }
    for name, value in fitted.items():
        given = params[name]
        if given is not None and (bool(given) if isinstance(value, bool) else given) != value:
            raise Invalid(f"`params.{name}` in {CONFIG} is {given!r}, but the model was fitted with {value!r}.")
    week = partner_week(params["weekly_partners"], normalise_freq(state.freq), state.season_length)
    if week != state.partner_week:
        raise Invalid(
            f"`params.weekly_partners` in {CONFIG} is {params['weekly_partners']!r}, but the model's partners take "
            f"{state.partner_week} periods a week."
        )
    # the covariates the network reads (a fit whose screen set the declared ones aside reads none)
    if partners_follow({**params, "future_covariates": state.roles.future}) != state.partners_follow_covariates:
        raise Invalid(
            f"`params.partners_follow_covariates` in {CONFIG} is {params['partners_follow_covariates']!r}, but the "
            f"model's partners {'follow' if state.partners_follow_covariates else 'do not follow'} its covariates."
        )
    if floor_rule(params) != state.nonnegative:
        raise Invalid(
            f"`params.nonnegative` in {CONFIG} is {params['nonnegative']!r}, but the model floors {state.nonnegative!r}."
        )
    if params["freq"] is not None and normalise_freq(params["freq"]).freqstr != normalise_freq(state.freq).freqstr:
        raise Invalid(f"`params.freq` in {CONFIG} is {params['freq']!r}, but the model was fitted on {state.freq!r}.")
