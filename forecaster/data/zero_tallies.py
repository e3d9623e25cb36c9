"""How often the target is zero on each value of each future-known flag or code: what a fit learns closures from.

``model.closures`` closes the periods on a covariate value whose observed targets were all zero, on enough rows that
the zeros elsewhere would rarely put so many together by chance. Those counts add up over parts of a panel, so a fit
that sees only a sample of the series (a Dask fit that streams its windows) learns the closures of the whole panel
from the partitions' tallies, merged, exactly as a fit of the whole frame would.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .seen_values import MAX_CODES


@dataclass(frozen=True)
class ZeroTally:
    """One covariate's tally over the rows with an observed target and a finite value: its distinct values, each
    value's rows and zero targets, and the rows and zero targets over all of its values."""

    values: np.ndarray
    count: np.ndarray
    zeros: np.ndarray
    rows: int
    zero_rows: int

    def merge(self, other: ZeroTally) -> ZeroTally | None:
        """Both parts' tally; None where their values together are too many for a flag or a code."""
        values = np.union1d(self.values, other.values)
        if len(values) > MAX_CODES:
            return None
        count, zeros = np.zeros(len(values)), np.zeros(len(values))
        for part in (self, other):
            at = np.searchsorted(values, part.values)
            count[at] += part.count
            zeros[at] += part.zeros
        return ZeroTally(values, count, zeros, self.rows + other.rows, self.zero_rows + other.zero_rows)

    @property
    def chance(self) -> np.ndarray:
        """Per value, the chance of a zero on the covariate's other rows (one zero and one non-zero added, so that a
        history without zeros elsewhere still needs several rows on the value)."""
        return (self.zero_rows - self.zeros + 1) / (self.rows - self.count + 2)


def numeric_values(frame: pd.DataFrame, name: str) -> np.ndarray | None:
    """A covariate's values as floats where it can mark closures; None for categories and booleans, which are encoded,
    not scaled (a closure is a numeric flag or code)."""
    if not pd.api.types.is_numeric_dtype(frame[name]) or pd.api.types.is_bool_dtype(frame[name]):
        return None
    return frame[name].to_numpy(dtype=np.float64)


def zero_tallies(frame: pd.DataFrame, target: str, future: Sequence[str]) -> dict[str, ZeroTally | None]:
    """Per numeric future-known covariate of ``frame``: its tally, or None where it has more than ``MAX_CODES``
    values (a measurement, never a closure). A covariate without an observed row has no entry."""
    y = frame[target].to_numpy(dtype=np.float64)
    observed = np.isfinite(y)
    zero = observed & (y == 0)
    out: dict[str, ZeroTally | None] = {}
    for name in future:  # a handful of covariates; each one grouped in one pass
        x = numeric_values(frame, name)
        if x is None:
            continue
        rows = observed & np.isfinite(x)
        if not rows.any():
            continue
        values, at = np.unique(x[rows], return_inverse=True)
        if len(values) > MAX_CODES:
            out[name] = None
            continue
        count = np.bincount(at, minlength=len(values)).astype(np.float64)
        zeros = np.bincount(at, weights=zero[rows], minlength=len(values))
        out[name] = ZeroTally(values, count, zeros, int(rows.sum()), int(zero[rows].sum()))
    return out


def merge_zero_tallies(parts: Sequence[dict[str, ZeroTally | None]]) -> dict[str, ZeroTally | None]:
    """The tallies of a whole panel from its parts' (each part's :func:`zero_tallies`)."""
    merged: dict[str, ZeroTally | None] = {}
    for part in parts:
        for name, tally in part.items():
            if name not in merged:
                merged[name] = tally
            elif merged[name] is not None:
                merged[name] = None if tally is None else merged[name].merge(tally)
    return merged
