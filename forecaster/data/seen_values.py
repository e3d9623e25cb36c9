"""What values of each numeric covariate a fit saw, and a warning where a forecast reads others.

A network extrapolates from inputs it was never trained on without a word: a shop's ``open`` flag given as 2, a
holiday flag that was 0 over the whole history and is 1 in the horizon, a temperature past any the fit saw. The
forecast for such a step is the network's guess. A fit records, per numeric covariate, the range of the values it saw
and, for a flag or code (at most ``MAX_CODES`` distinct values), the values themselves (``features.ColumnScaling``).
A forecast that reads a future-known covariate outside the range, or, for a column of at most ``CHECKED_CODES``
values, at a value between them, says where, and what the fit saw.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from ..callers import user_stacklevel
from .frames import shown_id

# Distinct values above which a covariate is a measurement (a temperature), not a flag or a code: a fit records the
# values of a flag or code it saw, and only the range of a measurement's (``model.closures`` learns closures only from
# flags and codes).
MAX_CODES = 32
# Most distinct values of a column whose values, not only its range, are checked: a flag or a code (the covariate
# screen reads 3 to 8 values as codes). A measurement with few distinct readings (whole degrees) is checked by its range.
CHECKED_CODES = 8
# Relative tolerance of the comparison with the values seen: a float32 0.1 given for the horizon is the 0.1 the
# float64 history held.
TOLERANCE = 1e-6


class UnseenValueWarning(UserWarning):
    """A forecast reads a future-known covariate at a value the fit never saw (the network extrapolates there), or a
    static category it never saw (read as none)."""


def seen_values(finite: np.ndarray) -> dict[str, Any]:
    """``low``, ``high`` and ``codes`` (the sorted distinct values, or None past ``MAX_CODES``) of a column's finite
    values (a non-empty array)."""
    distinct = pd.unique(finite)  # hashed, not sorted: a measurement's many values are never sorted
    codes = tuple(float(v) for v in np.sort(distinct)) if len(distinct) <= MAX_CODES else None
    return {"low": float(finite.min()), "high": float(finite.max()), "codes": codes}


def joined_codes(a, b) -> tuple[float, ...] | None:
    """The distinct values of both sides, sorted; None (a measurement) where either side or the union has too many."""
    if a is None or b is None:
        return None
    union = sorted(set(a) | set(b))
    return tuple(union) if len(union) <= MAX_CODES else None


def unseen(values: np.ndarray, scaling) -> np.ndarray:
    """Which ``values`` (finite floats) the fit never saw: none of its codes (a flag or code), or outside its range."""
    if scaling.codes is not None and len(scaling.codes) <= CHECKED_CODES:
        codes = np.asarray(scaling.codes, dtype=np.float64)
        near = np.abs(values[:, None] - codes[None, :]) <= TOLERANCE * np.abs(codes)[None, :]
        return ~near.any(axis=1)
    slack = TOLERANCE * max(abs(scaling.low), abs(scaling.high))
    return (values < scaling.low - slack) | (values > scaling.high + slack)


def warn_unseen_values(rows: pd.DataFrame, names, spec, id_col: str, time_col: str, when) -> None:
    """A warning per future-known covariate ``names`` whose values in ``rows`` (the horizon rows a forecast reads) the
    fit never saw (``spec``: the fit's ``FeatureSpec``); ``when`` formats a timestamp. Scalings without a record of
    the values seen (files written before fits kept one) are not checked."""
    for name in names:
        scaling = spec.numeric.get(name)
        if scaling is None or scaling.low is None:
            continue
        values = rows[name].to_numpy(dtype=np.float64)
        outside = unseen(values, scaling)
        if not outside.any():
            continue
        first = int(np.flatnonzero(outside)[0])
        if scaling.codes is not None and len(scaling.codes) <= CHECKED_CODES:
            saw = f"only {', '.join(f'{c + 0.0:g}' for c in scaling.codes)}"  # + 0.0: -0.0 reads 0
            odd = ", ".join(f"{v + 0.0:g}" for v in pd.unique(values[outside])[:5])
        else:
            saw = f"values from {scaling.low + 0.0:g} to {scaling.high + 0.0:g}"
            low, high = values[outside].min(), values[outside].max()
            odd = f"{low:g}" if low == high else f"{low:g} to {high:g}"
        warnings.warn(
            f"Future-known covariate `{name}` takes values the fit never saw on {int(outside.sum())} of the "
            f"{len(values)} horizon rows ({odd}; first for series {shown_id(rows[id_col].iloc[first])} at "
            f"{when(rows[time_col].iloc[first])}); the fit saw {saw}. The network extrapolates there: check those "
            "values, or refit on a history that holds them.",
            UnseenValueWarning,
            stacklevel=user_stacklevel(),
        )
