"""Series whose history holds one value: forecast as that value wherever nothing in their horizon is new.

A network and partners fitted to varying series put a constant series a few percent off, with a spread of its own:
its scale is zero, so the scaler falls back to its level (``data.scaling``), and the network's output, trained on
windows with a spread, comes back multiplied by the level. A quota held at 100 was forecast at 79, with a 10-90%
interval from 0 to 200. Nothing in such a history says the series moves, so it is forecast as its value at every
level.

With future-known covariates the horizon could say otherwise: a promotion the series has never had. A step keeps
the model's forecast only where its covariates take values that the series' observed history never held; a step
whose covariates the history held at its constant (no promotion, as always; or a promotion, under which it stayed
constant too) is forecast as that constant. Flags and codes must take values the history held together; a
measurement (a price that moved between 9.80 and 10.40 while the series stayed at 100) must lie within the range the
history held, since its exact values seldom repeat.
"""

from __future__ import annotations

import numpy as np

from ..data.panel import Panel
from ..data.seen_values import CHECKED_CODES

# Relative slack of a measurement's range: a value the history held, written back with rounding, is within it.
RANGE_TOLERANCE = 1e-9


def constant_history(y: np.ndarray, seen: np.ndarray, series: np.ndarray, origins: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Windows whose whole history up to the origin holds one value (observed at least twice), and that value.

    ``seen``: the panel's ``observed_cumsum``.
    """
    # Columns before a series' first period are NaN padding, which the running extremes and the count skip.
    with np.errstate(invalid="ignore"):
        high = np.fmax.accumulate(y, axis=1)[series, origins]  # one pass over the panel, then a lookup per window
        low = np.fmin.accumulate(y, axis=1)[series, origins]
    count = seen[series, origins + 1]
    return (count >= 2) & (high == low), np.where(np.isfinite(low), low, 0.0)


def measurements(names: tuple[str, ...], features) -> np.ndarray:
    """(F,) bool: which future-known covariates ``names`` the fit recorded as measurements (more than
    ``CHECKED_CODES`` distinct values in its panel: ``FeatureSpec.numeric[name].codes``), so that every forecast reads
    a covariate the same way whatever else it is given. Model files without the record read every one as a code."""
    scalings = [features.numeric.get(name) for name in names]
    return np.array(
        [s is not None and s.low is not None and (s.codes is None or len(s.codes) > CHECKED_CODES) for s in scalings],
        dtype=bool,
    )


def steps_seen(
    panel: Panel, y: np.ndarray, series: np.ndarray, origins: np.ndarray, horizon: int, measured: np.ndarray | None = None
) -> np.ndarray:
    """(B, H) bool: whether each horizon step's future-known covariates take values that its series' observed history
    up to the origin held. All True without future-known covariates.

    Flags and codes must take, all together, values the history held on some period (:func:`_codes_held`); a
    measurement (``measured``, from :func:`measurements`: a price, a temperature, whose values seldom repeat exactly)
    must lie within the range the history held (:func:`_within_ranges`). Each distinct
    series is read once: memory follows its rows, not the windows, and nothing loops over windows or steps.
    """
    if panel.future.shape[2] == 0 or len(series) == 0:
        return np.ones((len(series), horizon), dtype=bool)
    distinct, at = np.unique(series, return_inverse=True)
    values, observed = panel.future[distinct], np.isfinite(y[distinct])
    measured = np.zeros(values.shape[2], dtype=bool) if measured is None else measured
    ahead = origins[:, None] + np.arange(1, horizon + 1)[None, :]
    held = np.ones((len(series), horizon), dtype=bool)
    if not measured.all():
        held &= _codes_held(values[..., ~measured], observed, at, origins, ahead)
    if measured.any():
        held &= _within_ranges(values[..., measured], observed, at, origins, ahead)
    return held


def _codes_held(values: np.ndarray, observed: np.ndarray, at: np.ndarray, origins: np.ndarray, ahead: np.ndarray) -> np.ndarray:
    """(B, H): whether each step's codes (all together) were held on an observed period of its series by the origin.

    Each distinct series' periods are coded once (``_period_codes``) and each (series, code) pair's first observed
    period found once; a step is held where its pair was first observed by its window's origin.
    """
    _, codes = np.unique(_period_codes(values), return_inverse=True)  # compact: 0 .. K-1
    codes = codes.reshape(values.shape[:2]).astype(np.int64)
    width = int(codes.max()) + 1
    rows, columns = np.nonzero(observed)  # row-major: each row's columns ascending
    keys, first = np.unique(rows * width + codes[rows, columns], return_index=True)
    first_column = columns[first]  # each (series, code) pair's earliest observed period
    wanted = at[:, None] * width + codes[at[:, None], ahead]
    where = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    return (keys[where] == wanted) & (first_column[where] <= origins[:, None])


def _within_ranges(values: np.ndarray, observed: np.ndarray, at: np.ndarray, origins: np.ndarray, ahead: np.ndarray):
    """(B, H): whether each step's measurements all lie within the range its series' observed periods held by the
    origin (running extremes over each distinct series, then one lookup per window)."""
    seen = observed[..., None]
    high = np.maximum.accumulate(np.where(seen, values, -np.inf), axis=1)[at, origins][:, None, :]
    low = np.minimum.accumulate(np.where(seen, values, np.inf), axis=1)[at, origins][:, None, :]
    step = values[at[:, None], ahead]  # (B, H, M)
    slack = RANGE_TOLERANCE * np.maximum(np.abs(low), np.abs(high))
    return ((step >= low - slack) & (step <= high + slack)).all(axis=-1)


def _period_codes(rows: np.ndarray) -> np.ndarray:
    """(B, W) int64: one code per period for the values of its covariates ``rows`` (B, W, F), equal where all F are.

    Column by column (a 1-D ``np.unique`` each, then mixed radix), ten times faster than ``np.unique(axis=0)`` on the
    rows; the codes are compacted again before they could overflow.
    """
    codes = np.zeros(rows.shape[:2], dtype=np.int64)
    radix = 1
    for column in range(rows.shape[2]):  # a handful of covariates
        _, inverse = np.unique(np.nan_to_num(rows[:, :, column], nan=np.inf), return_inverse=True)
        codes += inverse.reshape(codes.shape).astype(np.int64) * radix
        radix *= int(inverse.max()) + 1
        if radix > 2**40:
            _, inverse = np.unique(codes, return_inverse=True)
            codes, radix = inverse.reshape(codes.shape).astype(np.int64), int(inverse.max()) + 1
    return codes


def constant_steps(
    panel: Panel, y: np.ndarray, seen: np.ndarray, series: np.ndarray, origins: np.ndarray, horizon: int, measured
) -> tuple[np.ndarray, np.ndarray]:
    """(B, H) the steps forecast as their series' constant, and that constant (B,). ``measured``: None where the
    model reads no future-known covariate, else which of them are measurements (then only the steps whose
    covariates the history held)."""
    constant, level = constant_history(y, seen, series, origins)
    steps = np.broadcast_to(constant[:, None], (len(series), horizon)).copy()
    if measured is not None and constant.any():
        rows = np.flatnonzero(constant)
        steps[rows] = steps_seen(panel, y, series[rows], origins[rows], horizon, measured)
    return steps, level
