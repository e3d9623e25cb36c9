"""What older versions wrote, and what it meant: the one place that knows which version did what.

A model file keeps the meaning its fit gave it. Fields and parameters added since a file was written are filled here
with the values its model was fitted and forecast with, before anything else reads the file:

- ``PARAM_DEFAULTS``: parameters a file's version did not have (``agreement`` completes a file's parameters with them);
- ``upgraded_state``: the fitted state's fields a file's version did not record (``store`` fills them in before
  ``FittedState.from_dict`` reads the state);
- ``FORMER_DEFAULT_WEIGHTS``: the partners' default weights of 0.3.0 to 0.9.0, which a file that recorded no blend
  forecasts with (``unrecorded_blend``) and which its explicit weights are checked against when it loads
  (``check_as_written``);
- ``RETIRED_COLUMNS``: columns of ``explain``'s point frames that no longer carry a part of the forecast, kept so that
  code reading them still runs.

Format-1 files (no manifest, untyped ids and categories, stringified history columns) are read by the parts that
decode each file (``reading``, ``schema``, ``codec``, ``FittedState.from_dict``, ``data.features``), by format
version.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..params import blend_weights, check_params
from ..resolve import resolve_units

# Parameters that files written before they existed lack, with the value those models were fitted with: no seasonal
# profile or trend line, no partners, the state design of attention, no floor at zero (before 0.11.0), no closures
# (before 0.13.0), partners with the daily season only (before 0.14.0).
PARAM_DEFAULTS = {
    "seasonal_profile": False,
    "trend_line": False,
    "theta_weight": 0.0,
    "holt_winters_weight": 0.0,
    "attention_values": "states",
    "nonnegative": False,
    "closed_when": None,
    "weekly_partners": False,
    "partners_follow_covariates": False,
}

# The partners' default weights of 0.3.0 to 0.9.0. A model file those versions wrote from a fit that recorded no blend
# (``from_pretrained``, or series too short to hold windows out; the shipped priors too) forecast with these; it still
# does, and its explicit weights are checked against them when it loads (the most those versions let a fit choose).
FORMER_DEFAULT_WEIGHTS = {"theta_weight": 0.15, "holt_winters_weight": 0.15}

# Fields of the fitted state that files written before they existed lack, with what those models forecast with: one
# member, no warm start, no calibration, no record of where the fit started or of its plan, no floor at zero (files
# written before 0.11.0 floor nothing), no closed periods (files written before 0.13.0 close none), no weekly partners
# (before 0.14.0).
STATE_DEFAULTS: dict[str, Any] = {
    "n_members": 1,
    "warm_starts": 0,
    "calibration": None,
    "init": None,
    "plan": None,
    "nonnegative": "none",
    "closed_when": {},
    "partner_week": 0,
    "partners_follow_covariates": False,
}
# Fields of a recorded calibration that files written before they existed lack: no partner's distribution mixed in.
CALIBRATION_DEFAULTS: dict[str, Any] = {"shape": 0.0}

# Columns of explain's point frames that no longer carry a part, at the value they keep: every part of the state
# design's head is now some history point's share, so ``step_head`` is 0; it stays for code that reads it.
RETIRED_COLUMNS = {"step_head": 0.0}


def unrecorded_blend(params: dict[str, Any]) -> dict[str, float]:
    """Each partner's weight for a model file that recorded no blend (0.9.0 or earlier): as those versions resolved it."""
    return blend_weights(params, None, FORMER_DEFAULT_WEIGHTS)


def check_as_written(params: dict[str, Any]) -> None:
    """``check_params`` as the fits that wrote model files checked: an unset weight counts as a default of 0.3.0 to 0.9.0
    (``FORMER_DEFAULT_WEIGHTS``) in the sum-to-one check, the most those fits let a partner take."""
    check_params(params, FORMER_DEFAULT_WEIGHTS)


def upgraded_state(fitted: dict[str, Any], params: dict[str, Any], offset: pd.DateOffset) -> dict[str, Any]:
    """A file's ``fitted`` record with every field its version did not write filled with what its model used.

    The target units (scaler, log target, seasonal profile, trend line) of a file that did not record them are the
    parameters', resolved as a fit resolves them; the other fields take ``STATE_DEFAULTS``.
    """
    units = resolve_units({**params, "season_length": int(fitted["season_length"])}, offset)
    fitted_with = {"scaler": params["scaler"], **{name: units[name] for name in ("log_target", "seasonal_profile", "trend_line")}}
    upgraded = {**fitted_with, **STATE_DEFAULTS, **fitted}
    if upgraded["calibration"] is not None:
        upgraded["calibration"] = {**CALIBRATION_DEFAULTS, **upgraded["calibration"]}
    return upgraded
