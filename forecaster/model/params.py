"""The estimator's parameters: one table of constraints, and the defaults derived from the data.

Every parameter of :class:`forecaster.Seq2SeqForecaster` has one row in ``CONSTRAINTS``:
a check and the words an error uses for it. ``check_params`` reads the table, then the few
rules that span several parameters (blend weights summing to at most 1, quantile levels). ``DEFAULTS`` holds
every parameter's default (the estimator's signature gives the same; a model file read without an estimator takes
them from here), and the ``MAX_*`` bounds are shared with the model files' schema.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd
import torch

from ..data.scaling import LOSS_SCALES, SCALERS
from ..partners.blend import PARTNERS
from .attention import ATTENTIONS
from .closures import LEARN, MAX_CLOSED_VALUES, closed_values

# Bounds of the parameters that size what a fit allocates; a model file may ask ``load`` for no more
# (``files.layout`` adds the bounds that only files have). Real models sit far inside them.
MAX_MEMBERS = 1_000
# Members of each shipped prior (one per pretraining seed): a fit from a prior with ``n_models`` None trains as many.
PRIOR_MEMBERS = 3
MAX_HIDDEN = 16_384
MAX_LAYERS = 64
MAX_STEPS = 100_000  # input_size, horizon, season_length
MAX_WINDOW_CELLS = 10_000_000  # input_size * horizon * members: each member allocates an (horizon, input_size) table (80 MB)
MAX_QUANTILES = 999
MAX_BATCH = 2**20
MAX_THREADS = 1024


def _positive_int(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, numbers.Integral) and value >= 1


def _int_up_to(high: int) -> Callable[[Any], bool]:
    return lambda value: _positive_int(value) and value <= high


def _optional(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: value is None or check(value)


def _one_of(*allowed: Any) -> Callable[[Any], bool]:
    return lambda value: any(value is a or (isinstance(value, str) and value == a) for a in allowed)


def _number_in(low: float, high: float, high_open: bool = False) -> Callable[[Any], bool]:
    def check(value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(float(value)):
            return False
        return low <= float(value) < high if high_open else low <= float(value) <= high

    return check


def _flag(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_))


def _names(value: Any) -> bool:
    """None, one column name, or an iterable of them (``CovariateRoles`` checks the names themselves)."""
    return value is None or isinstance(value, str) or (not isinstance(value, bytes) and hasattr(value, "__iter__"))


def _column_name(value: Any) -> bool:
    return isinstance(value, str) and value != ""


def _closures(value: Any) -> bool:
    """``closed_when``: None, "history", or {column name: a finite number or a list of up to 16 of them}."""
    if value is None or (isinstance(value, str) and value == LEARN):
        return True
    if not isinstance(value, Mapping) or not value:
        return False
    finite = _number_in(-np.inf, np.inf)
    for name, values in value.items():
        values = closed_values(values)
        if not _column_name(name) or not values or len(values) > MAX_CLOSED_VALUES or not all(map(finite, values)):
            return False
    return True


def _positive_number(value: Any) -> bool:
    return _number_in(0.0, np.inf)(value) and float(value) > 0.0


# Where a fit starts: random weights, or the shipped prior of the data's frequency (``forecaster.model.prior``).
INITS = ("auto", "scratch", "pretrained")


# Parameter -> (check, what the parameter must be). One row per constructor argument.
CONSTRAINTS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "horizon": (_int_up_to(MAX_STEPS), f"a positive integer up to {MAX_STEPS:,}"),
    "input_size": (_optional(_int_up_to(MAX_STEPS)), f"a positive integer up to {MAX_STEPS:,}, or None"),
    "freq": (
        _optional(lambda v: isinstance(v, pd.DateOffset) or (isinstance(v, str) and v != "")),
        "a pandas offset alias or None",
    ),
    "season_length": (_optional(_int_up_to(MAX_STEPS)), f"a positive integer up to {MAX_STEPS:,}, or None"),
    "future_covariates": (_names, "a column name or a list of them"),
    "past_covariates": (_names, "a column name or a list of them"),
    "static_covariates": (_names, "a column name or a list of them"),
    "quantiles": (_optional(lambda v: not isinstance(v, (str, bytes))), "a list of levels in (0, 1) or None"),
    "attention": (_one_of(*ATTENTIONS), f"one of {tuple(ATTENTIONS)}"),
    "attention_values": (_one_of("states", "observations"), "one of ('states', 'observations')"),
    "hidden_size": (_int_up_to(MAX_HIDDEN), f"a positive integer up to {MAX_HIDDEN:,}"),
    "num_layers": (_int_up_to(MAX_LAYERS), f"a positive integer up to {MAX_LAYERS}"),
    "cell": (_one_of("gru", "lstm"), "one of ('gru', 'lstm')"),
    "dropout": (_number_in(0.0, 1.0, high_open=True), "a number in [0, 1)"),
    "linear_skip": (_optional(_flag), "True, False or None"),
    "scaler": (_one_of(*SCALERS), f"one of {SCALERS}"),
    "loss_scale": (_one_of(*LOSS_SCALES), f"one of {LOSS_SCALES}"),
    "log_target": (_flag, "True or False"),
    "seasonal_profile": (_flag, "True or False"),
    "trend_line": (_optional(_flag), "True, False or None"),
    "theta_weight": (_optional(_number_in(0.0, 1.0)), "a number in [0, 1] or None"),
    "holt_winters_weight": (_optional(_number_in(0.0, 1.0)), "a number in [0, 1] or None"),
    "weekly_partners": (_optional(_flag), "True, False or None (data finer than a day, up to 15-minute periods)"),
    "partners_follow_covariates": (_optional(_flag), "True, False or None (with future-known covariates)"),
    "max_steps": (
        _optional(lambda v: not isinstance(v, bool) and isinstance(v, numbers.Integral) and v >= 0),
        "a positive integer, 0 (with init='pretrained': the prior as it is) or None",
    ),
    "batch_size": (_int_up_to(MAX_BATCH), f"a positive integer up to {MAX_BATCH:,}"),
    "learning_rate": (_positive_number, "a positive number"),
    "early_stopping": (_optional(_flag), "True, False or None"),
    "refit_on_full": (_flag, "True or False"),
    "warm_start": (_flag, "True or False"),
    "init": (_one_of(*INITS), f"one of {INITS}"),
    "fill_gaps": (_flag, "True or False"),
    "nonnegative": (_optional(_flag), "True, False or None (each series whose history is never negative)"),
    "closed_when": (
        _closures,
        f"'{LEARN}' (learnt from the history), None (no closed periods) or {{future covariate: a number or a list "
        f"of up to {MAX_CLOSED_VALUES}}}",
    ),
    "id_col": (_column_name, "a column name"),
    "time_col": (_column_name, "a column name"),
    "target_col": (_column_name, "a column name"),
    "n_models": (
        _optional(_int_up_to(MAX_MEMBERS)),
        f"a positive integer up to {MAX_MEMBERS:,}, or None (one per member of the prior a fit starts from, else 1)",
    ),
    "n_jobs": (_int_up_to(MAX_THREADS), f"a positive integer up to {MAX_THREADS:,}"),
    "device": (_one_of("auto", "cpu", "cuda"), "one of ('auto', 'cpu', 'cuda')"),
    "num_threads": (_optional(_int_up_to(MAX_THREADS)), f"a positive integer up to {MAX_THREADS:,}, or None"),
    "progress": (_flag, "True or False"),
    "random_state": (lambda v: not isinstance(v, bool) and isinstance(v, numbers.Integral) and v >= 0, "an integer >= 0"),
}


# The arguments of the package's functions (``backtest``, ``occlusion``) that take a count: name -> (check, what it must
# be), read by ``check_arguments`` as ``CONSTRAINTS`` is by ``check_params``; the estimator's own counts and fractions
# are rows of ``CONSTRAINTS``.
ARGUMENTS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "n_windows": (_int_up_to(MAX_STEPS), f"a positive integer up to {MAX_STEPS:,}"),
    "step_size": (_optional(_int_up_to(MAX_STEPS)), f"a positive integer up to {MAX_STEPS:,} or None"),
    "season_length": (_optional(_int_up_to(MAX_STEPS)), f"a positive integer up to {MAX_STEPS:,} or None"),
    "n_jobs": (_int_up_to(MAX_STEPS), f"a positive integer up to {MAX_STEPS:,}"),
    "n_points": (_int_up_to(MAX_STEPS), f"a positive integer up to {MAX_STEPS:,}"),
    "max_series": (_optional(_positive_int), "a positive integer or None (every series)"),
}


def check_arguments(**values: Any) -> None:
    """Refuse a function argument outside its row of ``ARGUMENTS``, naming it and what it must be.

    A flag, a fraction, zero, a negative number or a word is refused, never read as something else.

    Raises:
        ValueError: the first argument that breaks its row.
    """
    for name, value in values.items():
        check, must_be = ARGUMENTS[name]
        if not check(value):
            raise ValueError(f"`{name}` must be {must_be}; got {value!r}.")


# The deciles the probabilistic benchmarks score (weighted quantile loss over 0.1, ..., 0.9): the default levels.
NINE_LEVELS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)

# Every parameter's default beside its constraint: the estimator's signature gives the same values
# (tests/test_input_policies.py checks it), and a model file read without an estimator takes them from here.
DEFAULTS: dict[str, Any] = {
    "input_size": None,
    "freq": None,
    "season_length": None,
    "future_covariates": (),
    "past_covariates": (),
    "static_covariates": (),
    "quantiles": NINE_LEVELS,
    "attention": "dot",
    "attention_values": "states",
    "hidden_size": 64,
    "num_layers": 1,
    "cell": "gru",
    "dropout": 0.1,
    "linear_skip": None,
    "scaler": "standard",
    "loss_scale": "seasonal_naive",
    "log_target": False,
    "seasonal_profile": True,
    "trend_line": None,
    "theta_weight": None,
    "holt_winters_weight": None,
    "weekly_partners": None,
    "partners_follow_covariates": None,
    "max_steps": None,
    "batch_size": 128,
    "learning_rate": 0.003,
    "early_stopping": None,
    "refit_on_full": False,
    "warm_start": False,
    "init": "auto",
    "fill_gaps": False,
    "nonnegative": None,
    "closed_when": LEARN,
    "id_col": "unique_id",
    "time_col": "ds",
    "target_col": "y",
    "n_models": None,
    "n_jobs": 1,
    "device": "auto",
    "num_threads": 1,
    "progress": True,
    "random_state": 0,
}

# Parameters that only steer training (``device``: predict runs where the model was fitted): changing them
# after ``fit`` takes effect at the next fit.
# Every other parameter gives the fitted network its meaning, so a fitted model refuses to forecast
# once one of them has changed (``changed_since_fit``).
TRAINING_ONLY = frozenset(
    {"max_steps", "batch_size", "learning_rate", "early_stopping", "refit_on_full", "warm_start", "init", "n_models", "n_jobs"}
    | {"dropout", "loss_scale", "device", "num_threads", "progress", "random_state"}
)


def _comparable(value: Any) -> Any:
    """Sequences (lists, tuples, arrays, indexes) as tuples, so that values compare whatever container holds them."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        return value.item() if isinstance(value, np.generic) else value
    return tuple(_comparable(v) for v in value)


def changed_since_fit(fitted: Mapping[str, Any], current: Mapping[str, Any]) -> dict[str, tuple[Any, Any]]:
    """Parameters (besides ``TRAINING_ONLY``) whose value differs from the one the model was fitted with."""
    return {
        name: (fitted.get(name), value)
        for name, value in current.items()
        if name not in TRAINING_ONLY and _comparable(fitted.get(name)) != _comparable(value)
    }


def refuse_changed(fitted: Mapping[str, Any], current: Mapping[str, Any]) -> None:
    """Refuse to forecast with parameters other than those the model was fitted with (``changed_since_fit``).

    Raises:
        ValueError: naming each parameter changed, its value at fit and now.
    """
    changed = changed_since_fit(fitted, current)
    if changed:
        what = "; ".join(f"`{name}` fitted with {old!r}, now {new!r}" for name, (old, new) in changed.items())
        raise ValueError(f"Parameters changed after fit ({what}). Refit the model, or set them back.")


def has_future_covariates(params: Mapping[str, Any]) -> bool:
    """Whether the parameters declare future-known covariates (the partners, which cannot see them, weigh less)."""
    return bool(list(params.get("future_covariates") or ()))


def blend_weights(
    params: Mapping[str, Any], chosen: Mapping[str, float] | None = None, unset: Mapping[str, float] | None = None
) -> dict[str, float]:
    """Each statistical partner's weight resolved.

    An explicit weight is kept. None means the weight chosen at fit on held-out windows (``chosen``,
    see :mod:`forecaster.model.calibration`, or the weights a fit without held-out windows recorded). Without
    ``chosen``: ``unset`` (partner -> weight; default: the partners' defaults) without future-known covariates, 0
    with them. A model file that recorded no blend passes the weights it forecast with (``files.migration``).
    """
    future = has_future_covariates(params)
    resolved = {}
    for name, partner in PARTNERS.items():
        if params.get(name) is not None:
            resolved[name] = float(params[name])
        elif chosen is not None and name in chosen:
            resolved[name] = float(chosen[name])
        else:
            resolved[name] = 0.0 if future else (partner.default_weight if unset is None else float(unset[name]))
    return resolved


def explicit_blend_weights(params: Mapping[str, Any]) -> dict[str, float | None]:
    """Each partner's weight as given: a number, or None where the fit chooses it."""
    return {name: None if params.get(name) is None else float(params[name]) for name in PARTNERS}


def needs_calibration(params: Mapping[str, Any]) -> bool:
    """Whether a fit holds out windows: to choose a partner's weight, or to calibrate quantiles besides the median."""
    quantiles = params.get("quantiles")
    levels = {float(q) for q in (() if quantiles is None else quantiles)} - {0.5}
    return bool(levels) or any(weight is None for weight in explicit_blend_weights(params).values())


def check_params(params: Mapping[str, Any], unset: Mapping[str, float] | None = None) -> None:
    """Refuse any parameter outside its constraint, naming it and what it must be.

    ``unset``: the weight an unset partner counts with in the sum-to-one check (default: the partners' defaults, the
    most a fit may choose for it without future-known covariates; with them the check counts it as 0 and the fit
    keeps the sum within 1). A model file passes the weights the fits that wrote such files checked
    (``files.migration``); the weights its forecasts resolve are checked against its recorded blend.

    Raises:
        ValueError: a parameter breaks its row of ``CONSTRAINTS`` or a rule across parameters.
    """
    for name, (check, must_be) in CONSTRAINTS.items():
        value = params.get(name)
        try:
            ok = check(value)
        except TypeError:
            ok = False
        if not ok:
            raise ValueError(f"`{name}` must be {must_be}; got {value!r}.")
    if params["max_steps"] == 0 and params["init"] != "pretrained":  # "auto" may fit from scratch
        raise ValueError("`max_steps`=0 (no training) needs init='pretrained': a network from scratch must train.")
    weights = blend_weights(params, None, unset)  # an unset weight at its default (the most the fit may choose for it)
    if sum(weights.values()) > 1.0:
        raise ValueError(f"`theta_weight` and `holt_winters_weight` must sum to at most 1; got {weights}.")
    if params["quantiles"] is not None:
        levels = list(params["quantiles"])
        if len(levels) > MAX_QUANTILES:
            raise ValueError(f"`quantiles` lists {len(levels):,} levels; at most {MAX_QUANTILES} are allowed.")
        valid = all(isinstance(q, numbers.Real) and not isinstance(q, bool) and 0.0 < float(q) < 1.0 for q in levels)
        if not levels or not valid or len(set(levels)) != len(levels):
            raise ValueError(f"`quantiles` must be distinct levels strictly between 0 and 1; got {levels!r}.")
    check_memory(params)
    if params["device"] == "cuda" and not torch.cuda.is_available():
        raise ValueError("`device`='cuda' but CUDA is not available; use device='auto' or 'cpu'.")


def sized_members(params: Mapping[str, Any]) -> int:
    """Members to size a fit by: ``n_models``, or one when None (a fit from a prior has more, but the prior's
    own sizes, 64 units and windows of at most 36 + 48 periods, are far inside every bound)."""
    return params["n_models"] or 1


def training_bytes(params: Mapping[str, Any]) -> dict[str, float]:
    """Rough bytes a fit allocates, by what sizes them (float32): weights with Adam's two moments, one step's
    activations, and each member's (horizon, input_size) distance table. An estimate to refuse absurd sizes
    before anything is allocated, not an accounting (``input_size`` None is taken as the horizon or 8)."""
    hidden, layers, members = params["hidden_size"], params["num_layers"], sized_members(params)
    steps = params["input_size"] or max(params["horizon"], 8)
    window = steps + params["horizon"]
    weights = 3 * 4.0 * (16 * hidden * hidden * layers + hidden * window) * members
    activations = 4.0 * params["batch_size"] * (24 * window * hidden * layers + params["horizon"] * steps)
    table = 8.0 * params["horizon"] * steps * members
    return {"weights": weights, "activations": activations, "distance table": table}


def check_memory(params: Mapping[str, Any], available: float | None = None) -> None:
    """Refuse parameters whose fit would need more memory than the machine has, with the figure and the parameters.

    Raises:
        ValueError: naming the estimate, the memory available and the parameters that size the largest part.
    """
    cells = params["horizon"] * (params["input_size"] or max(params["horizon"], 8)) * sized_members(params)
    if cells > MAX_WINDOW_CELLS:
        raise ValueError(
            f"`horizon` x `input_size` x `n_models` is {cells:,}; at most {MAX_WINDOW_CELLS:,} is allowed (each member "
            "keeps a horizon x input_size table)."
        )
    parts = training_bytes(params)
    if available is None:
        try:
            available = float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
        except (ValueError, OSError, AttributeError):  # no sysconf (Windows): no bound beyond the table's
            return
    total = sum(parts.values())
    if total > available:
        largest = max(parts, key=parts.get)
        names = {
            "weights": "`hidden_size`, `num_layers` and `n_models`",
            "activations": "`batch_size`, `hidden_size`, `num_layers`, `input_size` and `horizon`",
            "distance table": "`horizon`, `input_size` and `n_models`",
        }[largest]
        raise ValueError(
            f"These parameters would need about {total / 2**30:,.1f} GiB ({largest}: {parts[largest] / 2**30:,.1f} GiB, "
            f"sized by {names}); this machine has {available / 2**30:,.1f} GiB. Lower them."
        )
