"""Warm starts: continue training from a fitted model's weights when its state is compatible.

Encoders and weights change together. Covariate standardisation is kept as fitted (re-fitting
it would shift what every weight reads). Categories of static covariates only ever grow: new
ones are appended after the known ones, so no known category is re-indexed, and the weights
that read the one-hot block get a zero column for each new category (the network's output is
unchanged until training moves them). New series need nothing: the network has no per-series
parameters. Any other change (roles, frequency, season, window, network shape, target units)
would change the meaning of the weights, so the model is fitted from scratch instead.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import torch

from ..data.features import FeatureSpec, check_static_types, fit_features, static_width
from ..data.roles import CovariateRoles
from .network import NetworkConfig
from .resolve import architecture
from .state import FittedState

# Layers whose input ends with the static covariates' block (see ``Seq2SeqNetwork``).
STATIC_INPUT_LAYERS = ("input_proj.weight", "query.0.weight", "direct.0.weight")


def incompatibility(state: FittedState, wanted: dict) -> str | None:
    """Why a fit with settings ``wanted`` cannot continue from ``state`` (None when it can)."""
    checks = {
        "covariate roles": (state.roles, wanted["roles"]),
        "frequency": (state.freq, wanted["freq"]),
        "season_length": (state.season_length, wanted["season_length"]),
        "input_size": (state.input_size, wanted["input_size"]),
        "quantiles": (state.quantiles, wanted["quantiles"]),
        "n_models": (state.n_members, wanted["n_members"]),
        "scaler": (state.scaler, wanted["scaler"]),
        "log_target": (state.log_target, wanted["log_target"]),
        "seasonal_profile": (state.seasonal_profile, wanted["seasonal_profile"]),
        "trend_line": (state.trend_line, wanted["trend_line"]),
    }
    for what, (before, now) in checks.items():
        if before != now:
            return f"{what} changed ({before!r} -> {now!r})"
    return None


def architecture_changed(config: NetworkConfig, params: dict) -> bool:
    """Whether the estimator's parameters ask for another architecture than ``config`` (widths the data sets aside)."""
    return replace(config, **architecture(params)) != config


def extend_features(spec: FeatureSpec, frame: pd.DataFrame, id_col: str, roles: CovariateRoles) -> FeatureSpec:
    """``spec`` with the categories of static covariates in ``frame`` that it has not seen appended, and the values of
    its covariates in ``frame`` added to those it saw."""
    return extend_spec(spec, fit_features(frame, id_col, roles))


def extend_spec(spec: FeatureSpec, seen: FeatureSpec) -> FeatureSpec:
    """``spec`` (the scalings it was trained with kept) with the categories of ``seen`` that it lacks appended, and the
    values ``seen`` saw added to those of its numeric columns (``ColumnScaling.widened``)."""
    for name, known in spec.categories.items():
        if name in seen.numeric:  # labels read back as numbers: no known category is left
            raise ValueError(
                f"Static covariate `{name}` was fitted with labels ({list(known)[:5]}) but now holds numbers: "
                "convert the column back to the labels it was fitted with, or fit from scratch (warm_start=False)."
            )
        check_static_types(name, list(known), list(seen.categories.get(name, [])))
    categories = {
        name: list(known) + [c for c in seen.categories.get(name, []) if c not in set(known)]
        for name, known in spec.categories.items()
    }
    numeric = {name: known.widened(seen.numeric[name]) if name in seen.numeric else known for name, known in spec.numeric.items()}
    return FeatureSpec(numeric, categories, seen.zero_tallies)


def static_column_map(old: FeatureSpec, new: FeatureSpec, statics: tuple[str, ...]) -> np.ndarray:
    """For each static input of ``old``, its column among the static inputs of ``new``."""
    mapping, offset = [], 0
    for name in statics:
        old_width = len(old.categories[name]) if name in old.categories else 1
        new_width = len(new.categories[name]) if name in new.categories else 1
        mapping.extend(offset + np.arange(old_width))
        offset += new_width
    return np.asarray(mapping, dtype=np.int64)


def widen_static_inputs(
    state_dict: dict[str, torch.Tensor], old: FeatureSpec, new: FeatureSpec, statics: tuple[str, ...]
) -> dict[str, torch.Tensor]:
    """Weights for the wider static block of ``new``: known columns moved to their place, new ones zero."""
    old_width, new_width = static_width(statics, old), static_width(statics, new)
    if old_width == new_width:
        return state_dict
    mapping = torch.from_numpy(static_column_map(old, new, statics))
    widened = dict(state_dict)
    for key, weight in state_dict.items():
        if not key.endswith(STATIC_INPUT_LAYERS):
            continue
        keep = weight.shape[1] - old_width
        grown = torch.zeros(weight.shape[0], keep + new_width, dtype=weight.dtype, device=weight.device)
        grown[:, :keep] = weight[:, :keep]
        grown[:, keep + mapping] = weight[:, keep:]
        widened[key] = grown
    return widened
