"""What the parameters left to the data resolve to: the window and season units, the input size, the linear skip,
the device, the levels trained, the members and the floor at zero.

A fit resolves them once (``model.plan.plan_fit``, ``model.execute.run_plan``); the fitted state records the result,
so a forecast never resolves them again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
import torch

from ..data.dates import shown_time
from ..data.frequency import periods_per_week, season_length_for, season_spans_a_year

# The longest week (in periods) that the partners take as a season by default (``weekly_partners=None``): 15-minute
# data. A weekly partner reads four weeks of history per window; finer data can ask for it (True).
MAX_DEFAULT_PARTNER_WEEK = 7 * 96


def resolve_units(params: Mapping[str, Any], offset: pd.DateOffset) -> dict[str, Any]:
    """Window length, season and target units of a fit, with the data-driven defaults resolved.

    ``trend_line=None`` turns the trend line on where a season spans a year or more; ``partner_week`` is
    :func:`partner_week`.
    """
    season = int(params["season_length"] or season_length_for(offset))
    trend = params["trend_line"]
    return {
        "input_size": int(params["input_size"] or default_input_size(params["horizon"], season)),
        "season_length": season,
        "log_target": bool(params["log_target"]),
        "seasonal_profile": bool(params["seasonal_profile"]),
        "trend_line": season_spans_a_year(offset, season) if trend is None else bool(trend),
        "partner_week": partner_week(params.get("weekly_partners"), offset, season),
    }


def partner_week(weekly_partners: bool | None, offset: pd.DateOffset, season: int) -> int:
    """Periods per week that each series' partners may take as their season (``partners.season``; 0: never).

    None: the week of data finer than a day whose season is the day, up to ``MAX_DEFAULT_PARTNER_WEEK`` periods;
    True: that week at any such frequency; False: none.

    Raises:
        ValueError: ``weekly_partners=True`` on data without such a week.
    """
    week = periods_per_week(offset, season)
    if weekly_partners is None:
        return week if week <= MAX_DEFAULT_PARTNER_WEEK else 0
    if weekly_partners and not week:
        raise ValueError(
            f"weekly_partners=True needs data finer than a day whose season is the day; got freq={offset.freqstr!r} "
            f"with season_length={season}. Leave it None, or set it False."
        )
    return week if weekly_partners else 0


def linear_skip(params: Mapping[str, Any]) -> bool:
    """``linear_skip`` resolved: None means on for state values and off for observation values."""
    if params["linear_skip"] is not None:
        return bool(params["linear_skip"])
    return params["attention_values"] == "states"


def architecture(params: Mapping[str, Any]) -> dict[str, Any]:
    """The ``NetworkConfig`` fields that the estimator's parameters set (the data sets the widths)."""
    return {
        "horizon": params["horizon"],
        "hidden_size": params["hidden_size"],
        "num_layers": params["num_layers"],
        "dropout": float(params["dropout"]),
        "cell": params["cell"],
        "attention": params["attention"],
        "skip": linear_skip(params),
        "values": params["attention_values"],
    }


def resolve_device(device: str) -> str:
    """``"auto"`` resolved to CUDA when available, else CPU."""
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


def training_quantiles(quantiles: Any) -> tuple[float, ...]:
    """The levels the network is trained on: the requested ones plus the median, sorted."""
    if quantiles is None:
        return (0.5,)
    return tuple(sorted({float(q) for q in quantiles} | {0.5}))


def default_input_size(horizon: int, season_length: int) -> int:
    """History length used when `input_size` is None: one horizon or two seasons, whichever is longer (at least 8).

    Chosen by rolling-origin validation on the training parts of Tourism quarterly and
    M3 monthly (docs/model.md): longer windows (2 horizons, 3 seasons) were no better on
    Tourism and worse on M3 (mean MASE 0.978 with 36 vs 0.960 with 24).
    """
    return int(max(horizon, 2 * season_length, 8))


def partners_follow(params: Mapping[str, Any]) -> bool:
    """``partners_follow_covariates`` resolved: None and True where future-known covariates are declared (there is
    nothing to follow without them), False never (``model.partner_shift``)."""
    value = params.get("partners_follow_covariates")
    return bool(list(params.get("future_covariates") or ())) and (value is None or bool(value))


def member_count(n_models: int | None, prior_members: int | None) -> int:
    """Members of a fit: ``n_models`` when given; else one per member of the prior it starts from, or one."""
    return n_models or prior_members or 1


# How a fit floors its forecasts at zero (``nonnegative``): each window whose series' history up to the origin is
# never negative, every window, or none. The fitted state records the rule (``files.migration`` gives model files
# without one the rule they forecast with).
FLOOR_RULES = ("series never negative", "every series", "none")


def floor_rule(params: Mapping[str, Any]) -> str:
    """``nonnegative`` resolved: None floors each series whose observed history is never negative, True every
    series, False none (``FLOOR_RULES``)."""
    value = params.get("nonnegative")
    return FLOOR_RULES[0] if value is None else FLOOR_RULES[1] if value else FLOOR_RULES[2]


# A series of counts (whole numbers) with negative targets on at most this share of its observations (one at least) is
# named in a note: a return booked as a sale of -1 takes the floor away from it.
FEW_NEGATIVES_SHARE = 0.01


def few_negatives_note(frame: pd.DataFrame, id_col: str, time_col: str, target: str, tz: str | None = None) -> str | None:
    """Under the default floor, a note naming the series of counts that lose it by a few negative targets (and the
    first of them, at its time in the zone of the user's data: ``tz`` is the fit's zone token). Series of other values
    (a profit, a temperature) that dip below zero are not named."""
    y = frame[target]
    groups = frame[id_col]
    negative = (y < 0).groupby(groups, sort=False, observed=True).sum()
    observed = y.notna().groupby(groups, sort=False, observed=True).sum()
    counts = (y.isna() | (y == y.round())).groupby(groups, sort=False, observed=True).all()
    few = negative[(negative > 0) & (negative <= (FEW_NEGATIVES_SHARE * observed).clip(lower=1)) & counts]
    if few.empty:
        return None
    first = frame[frame[id_col].isin(few.index) & (y < 0)].iloc[0]
    named = f"{', '.join(map(repr, few.index[:3]))}{', ...' if len(few) > 3 else ''}"
    return (
        f"{len(few)} series have a few negative `{target}` values ({named}; the first: {first[id_col]!r} at "
        f"{shown_time(first[time_col], tz)}, {first[target]:g}), so "
        "their forecasts are not floored at zero and their quantiles may go below it. Correct those values (a return "
        "booked as a negative sale?), or set nonnegative=True to floor every series."
    )
