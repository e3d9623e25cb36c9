"""The shipped prior: which one serves a frequency, and its weights fitted to a horizon, quantiles and covariates.

One prior per frequency family (yearly, quarterly, monthly; ``forecaster.pretraining.corpus.FAMILIES``),
trained at the family's longest horizon (48 steps) and stored in the safe model-file format under
``forecaster/pretrained/<family>``. A prior is an ensemble: one member per pretraining seed (each seed draws its own
synthetic corpus and initial weights), and member k of a fit starts from member k of the prior.
A shorter horizon uses the first steps of that network: each step's query, attention and head read only its own
step embedding, so the forecasts of steps 1..h are exactly those of the full network. Quantile levels are rows of
the head's last layer, so any subset of the prior's levels is served. Covariates the prior never saw enter through
zero weights, as new categories of a warm start do: the prior's forecasts are unchanged until fine-tuning moves them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ..data.frequency import _MONTHLY, _QUARTERLY, _YEARLY, _base_name, normalise_freq
from .files import ModelFileError, read_fitted
from .network import NetworkConfig
from .resolve import linear_skip, resolve_units

PRIOR_FOLDER = Path(__file__).resolve().parent.parent / "pretrained"
# Frequency family of each calendar frequency the priors serve (multiples such as '2MS' are not served).
SERVED = {**dict.fromkeys(_YEARLY, "yearly"), **dict.fromkeys(_QUARTERLY, "quarterly"), **dict.fromkeys(_MONTHLY, "monthly")}
SERVED_WORDS = "yearly, quarterly and monthly data (any anchor: 'YS', 'YE', 'QS-OCT', 'ME', 'MS', business variants)"
# The estimator's parameters that must match the prior's (they shape its weights or their meaning).
MATCHED = (
    "hidden_size",
    "num_layers",
    "cell",
    "attention",
    "attention_values",
    "linear_skip",
    "scaler",
    "log_target",
    "seasonal_profile",
)


class PriorUnavailableError(ValueError):
    """No shipped prior serves this frequency, or the estimator's settings differ from the prior's."""


@dataclass(frozen=True)
class Prior:
    """A shipped prior: its parameters, fitted state (no history) and each member's weights."""

    family: str
    params: dict
    config: NetworkConfig
    quantiles: tuple[float, ...]
    season_length: int
    input_size: int
    trend_line: bool
    members: tuple[dict[str, torch.Tensor], ...]


def family_of(offset: pd.DateOffset) -> str:
    """The prior family that serves ``offset``.

    Raises:
        PriorUnavailableError: no prior serves it (weekly, daily, sub-daily data, multiples of a period).
    """
    base = _base_name(offset)
    if abs(offset.n) != 1 or base not in SERVED:
        raise PriorUnavailableError(
            f"No pretrained prior serves frequency {offset.freqstr!r}: the priors serve {SERVED_WORDS}. "
            "Fit from scratch (init='scratch') for other frequencies."
        )
    return SERVED[base]


@functools.cache
def load_prior(family: str) -> Prior:
    """The shipped prior of ``family``, read once per process (``torch.load(weights_only=True)``, no pickle)."""
    folder = PRIOR_FOLDER / family
    if not (folder / "manifest.json").is_file():
        raise PriorUnavailableError(
            f"The {family} prior is not installed (no complete model at {str(folder)!r}); reinstall forecaster."
        )
    try:
        params, state, network = read_fitted(folder)
    except ModelFileError as error:
        raise PriorUnavailableError(f"The {family} prior could not be read ({error}); reinstall forecaster.") from None
    _check_family(family, state.freq, folder)
    return Prior(
        family=family,
        params=params,
        config=state.network,
        quantiles=state.quantiles,
        season_length=state.season_length,
        input_size=state.input_size,
        trend_line=state.trend_line,
        members=tuple({k: v.detach().clone() for k, v in member.state_dict().items()} for member in network.members),
    )


def _check_family(family: str, freq: str, folder: Path) -> None:
    """Refuse a prior installed under another family's name (its settings would then be reported as the user's to change).

    Raises:
        PriorUnavailableError: the prior in ``folder`` was trained on data of another family's frequency.
    """
    try:
        found = family_of(normalise_freq(freq))
    except (PriorUnavailableError, ValueError):
        found = None
    if found != family:
        what = f"a {found} prior" if found else "no family a prior serves"
        raise PriorUnavailableError(
            f"The model installed as the {family} prior ({str(folder)!r}) was trained on {freq!r} data, {what}: "
            "the installation is broken; reinstall forecaster."
        )


def _trained_with(prior: Prior, params: dict, name: str) -> tuple:
    """A matched setting as the fit resolves it and as the prior was trained with (``linear_skip`` None resolves)."""
    if name == "linear_skip":
        return linear_skip(params), linear_skip(prior.params)
    return params[name], prior.params[name]


def prior_for(offset: pd.DateOffset, params: dict, units: dict) -> Prior:
    """The prior that serves a fit with these parameters, checked against them.

    ``units`` are the fit's resolved units (``resolve_units``), with ``input_size`` None when not given.

    Raises:
        PriorUnavailableError: no prior serves the frequency, or a setting differs from the prior's
            (the message names it and the value the prior needs).
    """
    prior = load_prior(family_of(offset))
    if params["horizon"] > prior.config.horizon:
        raise PriorUnavailableError(
            f"The {prior.family} prior serves horizons up to {prior.config.horizon}; got horizon={params['horizon']}."
        )
    asked = {  # the fit's setting -> the prior's
        "season_length": (units["season_length"], prior.season_length),
        "input_size": (units["input_size"] or prior.input_size, prior.input_size),
        "trend_line": (units["trend_line"], prior.trend_line),
        **{name: _trained_with(prior, params, name) for name in MATCHED},
    }
    for name, (mine, trained) in asked.items():
        if mine != trained:
            raise PriorUnavailableError(
                f"The {prior.family} prior was trained with {name}={trained!r}; got {mine!r}. "
                f"Leave `{name}` at the prior's value, or fit from scratch (init='scratch')."
            )
    missing = sorted({float(q) for q in (() if params["quantiles"] is None else params["quantiles"])} - set(prior.quantiles))
    if missing:
        raise PriorUnavailableError(
            f"The {prior.family} prior forecasts the levels {list(prior.quantiles)}; `quantiles` asks for {missing}."
        )
    return prior


def zero_shot_params(params: dict) -> dict:
    """The parameters of a model that forecasts with the prior as it is (``from_pretrained``): ``params`` with
    ``init="pretrained"`` and ``max_steps=0``.

    Raises:
        ValueError: covariates are declared (a prior reads the target alone).
    """
    if params.get("future_covariates") or params.get("past_covariates") or params.get("static_covariates"):
        raise ValueError(
            "from_pretrained forecasts from the target alone; to use covariates, fit "
            "Seq2SeqForecaster(horizon, init='pretrained', ...) on your panel (it fine-tunes the prior)."
        )
    return {**params, "init": "pretrained", "max_steps": 0}


def check_served(params: dict) -> None:
    """Refuse now, not at the first forecast, a model that forecasts with the prior as it is (``from_pretrained``) when
    its ``freq`` is given and no prior serves it with these parameters (``freq`` None: checked against each panel).

    Raises:
        PriorUnavailableError: as :func:`prior_for`.
    """
    if params["freq"] is not None:
        offset = normalise_freq(params["freq"])
        prior_for(offset, params, {**resolve_units(params, offset), "input_size": params["input_size"]})


# The most rows beyond one horizon per series (about the training windows) for which init="auto" starts from the
# prior. Chosen on the validation suite: its small panels (336 to 3,298) and M3 yearly (3,706) forecast better from the
# prior, Tourism yearly (4,488), M3 other (7,757) and the larger panels better from scratch (benchmarks/history/0.5.0.md).
AUTO_PRIOR_MAX_ROWS = 4_000


def frame_windows(frame: pd.DataFrame, columns, horizon: int) -> int:
    """Rows beyond one horizon per series: about the training windows a fit of ``frame`` would have."""
    counts = frame.groupby(columns.id, sort=False, observed=True)[columns.target].count().to_numpy()
    return int(np.clip(counts - horizon, 0, None).sum())


def auto_prior(offset: pd.DateOffset, params: dict, units: dict, roles, rows: int) -> tuple[Prior | None, str | None]:
    """The prior an ``init="auto"`` fit starts from (None: from scratch), and why not where it could have.

    The prior where it served the validation suite better: small panels (at most ``AUTO_PRIOR_MAX_ROWS`` rows beyond
    one horizon) without covariates (a prior learns a covariate's effect only in part, docs/prior.md), of a served
    frequency. Outside that scope the fit starts from scratch as documented, and the reason is None. Inside it, a fit
    that still starts from scratch (a warm start, a setting the prior was not trained with, a broken install)
    gets the reason, which the estimator reports.
    """
    if rows > AUTO_PRIOR_MAX_ROWS or roles.future or roles.past or roles.static:
        return None, None
    try:
        family = family_of(offset)
    except PriorUnavailableError:
        return None, None
    if params["warm_start"]:
        return None, (
            f"init='auto' fits from scratch, not from the {family} prior: warm_start=True starts a first fit from scratch "
            "(init='pretrained' starts it from the prior, init='scratch' says from scratch without this warning)."
        )
    try:
        return prior_for(offset, params, units), None
    except PriorUnavailableError as error:
        return None, f"init='auto' fits from scratch, not from the {family} prior: {error}"


def _insert_zero_columns(weight: torch.Tensor, at: int, count: int) -> torch.Tensor:
    if count == 0:
        return weight
    zeros = torch.zeros(weight.shape[0], count, dtype=weight.dtype)
    return torch.cat([weight[:, :at], zeros, weight[:, at:]], dim=1)


def adapted_weights(prior: Prior, config: NetworkConfig, member: int = 0) -> dict[str, torch.Tensor]:
    """The weights of the prior's ``member`` (taken modulo its members) for a network of shape ``config``: its horizon
    and its covariate inputs.

    ``config`` differs from the prior's only in horizon (not longer) and covariate widths (past and
    future-known covariates, statics: zero weights). The network outputs the prior's levels (the estimator
    returns those its ``quantiles`` ask for).
    """
    base = prior.config
    d, h = base.hidden_size, config.horizon
    weights = dict(prior.members[member % len(prior.members)])
    weights["step_embedding.weight"] = weights["step_embedding.weight"][:h]
    weights["distance_bias"] = weights["distance_bias"][: base.input_size + h]
    if base.skip:
        weights["skip.weight"] = weights["skip.weight"][:h]
        weights["skip.bias"] = weights["skip.bias"][:h]
    past = config.past_features - base.past_features
    future = config.future_features - base.future_features
    statics = config.static_features - base.static_features
    if min(past, future, statics) < 0:
        raise ValueError("A network fine-tuned from the prior cannot have fewer inputs than the prior.")
    # input_proj reads [target, observed, past covariates | calendar | decomposition, statics]
    inputs = _insert_zero_columns(weights["input_proj.weight"], 2, past)
    weights["input_proj.weight"] = _insert_zero_columns(inputs, inputs.shape[1], statics)
    # the query reads [step embedding, summary, future covariates | calendar | decomposition, statics]
    query = _insert_zero_columns(weights["query.0.weight"], 2 * d, future)
    weights["query.0.weight"] = _insert_zero_columns(query, query.shape[1], statics)
    return weights


def learning_rate_scales(prior: Prior, config: NetworkConfig, share: float) -> dict[str, torch.Tensor]:
    """Per weight of a network of shape ``config``: ``share`` where it comes from the prior, 1 where it is new.

    A fit from the prior moves the prior's weights at ``share`` of the learning rate, so the held-out windows can keep
    it close; the weights of covariates the prior never saw start at zero and learn at the full rate (at a
    hundredth they learnt nothing: a promotion effect that a fit from scratch finds stayed unused).
    """
    ones = {k: torch.ones_like(v) for k, v in prior.members[0].items()}
    marked = adapted_weights(replace(prior, members=(ones,)), config)
    return {name: torch.where(mark == 1.0, share, 1.0) for name, mark in marked.items() if mark.is_floating_point()}
