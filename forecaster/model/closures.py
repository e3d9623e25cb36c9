"""Closed periods: values of a future-known covariate on which the target is zero, so the forecast there is zero.

A shop's ``open`` flag, a depot's holiday or a line's maintenance day says in advance that nothing will be sold,
carried or admitted. The network learns such a value only as far as its few occurrences let it (25 December comes
once a year), and the statistical partners, which cannot see covariates, forecast those periods as open. A fit
therefore resolves, once, which covariate values mark closed periods (``closed_when``), and every forecast step
whose future-known covariates take one of them is forecast as zero at every level, after the blend, the interval
factors and the floor at zero.

The rule a fit learns (``closed_when="history"``): a value of a future-known flag or code (a covariate of at most
``MAX_CODES`` distinct values; a measurement such as a temperature is neither) closes a period when every
observed target on that value, over every series of the fit's history, is exactly zero, on at least
``MIN_CLOSED_ROWS`` rows, and on so many that zeros elsewhere in the history would put that many together by
chance with odds under ``CHANCE_ODDS``. A panel with few zeros learns a closure from a handful of closed days; a
panel of intermittent series, where zeros are the rule, needs many more before a value counts. Only the history a
fit is given decides, so a backtest fold learns it from data up to its origin.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..data.dates import shown_time
from ..data.frames import shown_id
from ..data.seen_values import MAX_CODES
from ..data.zero_tallies import ZeroTally, numeric_values, zero_tallies

# The fewest observed rows on a value before it can mark closed periods, whatever the zeros elsewhere.
MIN_CLOSED_ROWS = 3
# The most likely that the zeros on a value came together by chance, given how often the target is zero elsewhere
# (``p ** rows``), for the value to mark closed periods.
CHANCE_ODDS = 1e-3
# Values a declared or learnt closure keeps per covariate (a flag has one; a covariate with more is not a flag).
MAX_CLOSED_VALUES = 16
# ``MAX_CODES``: distinct values above which a covariate is a measurement (a temperature), not a flag or a code: none of
# its values is learnt as a closure. Cold readings that occur only at night, when a call centre is closed, closed cold
# open hours.
# "history": learn the closures from the fit's history; None: none.
LEARN = "history"


def learn_closures(frame: pd.DataFrame, target: str, future: Sequence[str]) -> dict[str, list[float]]:
    """Each future-known covariate's values that mark closed periods in ``frame`` (see the module's rule).

    ``frame``: the validated training frame (one row per series and period, NaN where the target is missing).
    Returns {covariate: sorted values}, only the covariates with at least one; empty where none.
    """
    return closures_from(zero_tallies(frame, target, future))


def closures_from(tallies: Mapping[str, ZeroTally | None]) -> dict[str, list[float]]:
    """The closures the module's rule reads from a panel's tallies (``data.zero_tallies``: of a frame, or merged from
    a Dask panel's partitions)."""
    closures: dict[str, list[float]] = {}
    for name, tally in tallies.items():
        if tally is None:  # a measurement
            continue
        count, zeros = tally.count, tally.zeros
        closing = (zeros == count) & (count >= MIN_CLOSED_ROWS) & (count * np.log(tally.chance) < np.log(CHANCE_ODDS))
        if closing.any() and closing.sum() <= MAX_CLOSED_VALUES:
            closures[name] = [float(v) for v in tally.values[closing]]
    return closures


# A value whose targets are zero but for at most this share of its rows (and NEAR_MISS_ROWS at least), and whose zeros
# alone would clear the rule, is named in a note: a stray count logged on a closed hour keeps it from closing.
NEAR_MISS_SHARE = 0.01
NEAR_MISS_ROWS = 2


def near_misses(
    frame: pd.DataFrame, target: str, future: Sequence[str], id_col: str, time_col: str, tz: str | None = None
) -> list[str]:
    """Notes on the values that would mark closed periods (the module's rule) but for a few non-zero targets, each
    naming the covariate, the value, how many targets are not zero and the first of them (series and time, in the zone
    of the user's data: ``tz`` is the fit's zone token)."""
    y = frame[target].to_numpy(dtype=np.float64)
    notes = []
    for name, tally in zero_tallies(frame, target, future).items():
        if tally is None:  # a measurement
            continue
        values, count, zeros = tally.values, tally.count, tally.zeros
        strays = count - zeros
        near = (strays > 0) & (strays <= np.maximum(NEAR_MISS_ROWS, NEAR_MISS_SHARE * count)) & (zeros >= MIN_CLOSED_ROWS)
        near &= zeros * np.log(tally.chance) < np.log(CHANCE_ODDS)
        x = numeric_values(frame, name)
        for k in np.flatnonzero(near)[:MAX_CLOSED_VALUES]:
            first = np.flatnonzero((x == values[k]) & np.isfinite(y) & (y != 0))[0]  # the first stray count
            notes.append(
                f"{name}={values[k]:g} looks like a closure but is not learnt as one: {int(strays[k])} of its "
                f"{int(count[k])} observed targets are not zero (the first: series {shown_id(frame[id_col].iloc[first])} at "
                f"{shown_time(frame[time_col].iloc[first], tz)}, {y[first]:g}). Those periods are forecast as open; declare "
                f"closed_when={{{name!r}: {values[k]:g}}} to forecast them at zero, or correct those targets."
            )
    return notes


def never_observed(
    frame: pd.DataFrame, target: str, future: Sequence[str], id_col: str, time_col: str, tz: str | None = None
) -> list[str]:
    """Notes on the values of a numeric future-known flag or code that occur in the history only on rows without an
    observed target (a shop export that leaves its closed days empty): the network never saw what they mean, so a
    horizon period holding one is forecast as the others, and the closure rule cannot learn them. Each note names the
    covariate, the value, its rows and the first of them, and what to do."""
    y = frame[target].to_numpy(dtype=np.float64)
    observed = np.isfinite(y)
    notes = []
    for name in future:
        x = numeric_values(frame, name)
        if x is None:
            continue
        present = np.isfinite(x)
        values = np.unique(x[present])
        if len(values) > MAX_CODES:
            continue
        seen = np.unique(x[present & observed])
        for value in values[~np.isin(values, seen)][:MAX_CLOSED_VALUES]:
            rows = np.flatnonzero(present & (x == value))
            if len(rows) < MIN_CLOSED_ROWS:
                continue
            first = rows[0]
            notes.append(
                f"{name}={value:g} occurs on {len(rows)} rows, none with an observed `{target}` (the first: series "
                f"{shown_id(frame[id_col].iloc[first])} at {shown_time(frame[time_col].iloc[first], tz)}): the model never saw "
                f"what it means, and forecasts such periods as the others. If they are closed, record `{target}` as 0 "
                f"there, or declare closed_when={{{name!r}: {value:g}}} to forecast them at zero."
            )
    return notes


def resolve_closures(
    value: Any, frame: pd.DataFrame, target: str, future: Sequence[str], tallies: Mapping | None = None
) -> dict[str, list[float]]:
    """``closed_when`` resolved for a fit on ``frame``: learnt (``"history"``), none (None), or as declared.
    ``tallies``: the whole panel's (``data.zero_tallies``) where ``frame`` is a sample of it; a learnt rule reads them.

    Raises:
        ValueError: a declared closure names a column that is not a future-known covariate, or a value that is not
            a number.
    """
    if value is None:
        return {}
    if isinstance(value, str):
        return learn_closures(frame, target, future) if tallies is None else closures_from(tallies)
    declared: dict[str, list[float]] = {}
    for name, values in value.items():
        if name not in future:
            raise ValueError(
                f"`closed_when` names {name!r}, which is not a future-known covariate (`future_covariates` is "
                f"{list(future)}): a closure must be known when the forecast is made."
            )
        if not pd.api.types.is_numeric_dtype(frame[name]) or pd.api.types.is_bool_dtype(frame[name]):
            raise ValueError(f"`closed_when` names {name!r}, which is not numeric: a closure is a numeric flag or code.")
        declared[name] = sorted(float(v) for v in closed_values(values))
    return declared


def closed_values(values: Any) -> list[Any]:
    """The values of one declared closure: a number or a list of numbers."""
    return list(values) if isinstance(values, list | tuple) else [values]


def closed_steps(closures: Mapping[str, Sequence[float]], future_names: Sequence[str], future: np.ndarray, scaling) -> np.ndarray:
    """(B, H) which forecast steps are closed: any closure's covariate at one of its values.

    ``future``: the windows' standardised future-known covariates (B, H, Cf) in the order of ``future_names``;
    ``scaling``: the fit's ``FeatureSpec.numeric`` (each covariate's mean and standard deviation), which turns each
    value into the units of ``future``.
    """
    closed = np.zeros(future.shape[:2], dtype=bool)
    for name, values in closures.items():
        if name not in future_names or name not in scaling:
            continue
        column = future[:, :, future_names.index(name)].astype(np.float64)
        for value in values:  # a flag's one value, a few at most
            standard = (value - scaling[name].mean) / scaling[name].std
            closed |= np.abs(column - standard) <= 1e-5 * max(1.0, abs(standard))
    return closed
