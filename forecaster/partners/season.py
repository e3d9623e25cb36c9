"""The season each series' partners are fitted with: the day, or the week where the week forecasts better.

The partners (Theta, Holt-Winters) take one season. On data finer than a day that season is the day, and a
partner fitted with it repeats the last days' profile: Saturday is forecast like Friday. Where the week is the
stronger cycle that costs a great deal (the half-hourly ``taylor`` demand: MASE 0.80 against MSTL's 0.31 with daily
partners, 0.34 with weekly ones), and where the weather drives demand and the days of the week look alike it is the
other way round (the half-hourly electricity study: a week-ago value is 18% further from the actual than a day-ago
one, and weekly partners take its MASE from 0.20 to 0.53). So each window chooses on its own history, by a rule
rather than a tuned number: over the last ``PARTNER_WEEKS`` weeks before its origin, the week is taken where the
value a week before forecast each period better (mean absolute error) than the value a day before.
benchmarks/history/0.14.0.md has the measurements.
"""

from __future__ import annotations

import numpy as np

# Weeks of history a weekly partner reads, and over which the rule compares the two seasons.
PARTNER_WEEKS = 4


def partner_history(week: int) -> int:
    """Periods up to an origin that a weekly partner reads (0 without one)."""
    return PARTNER_WEEKS * week if week > 0 else 0


def _lag_error_sums(y: np.ndarray, lag: int) -> tuple[np.ndarray, np.ndarray]:
    """Running sums (N, W + 1) of ``|y[t] - y[t - lag]|`` over the observed pairs, and their counts."""
    diff = np.full(y.shape, np.nan)
    if lag < y.shape[1]:
        diff[:, lag:] = np.abs(y[:, lag:] - y[:, :-lag])
    seen = np.isfinite(diff)
    zero = np.zeros((len(y), 1))
    sums = np.concatenate([zero, np.where(seen, diff, 0.0).cumsum(axis=1)], axis=1)
    return sums, np.concatenate([zero, seen.cumsum(axis=1)], axis=1)


def prefers_week(
    y: np.ndarray, first_col: np.ndarray, series: np.ndarray, origins: np.ndarray, day: int, week: int
) -> np.ndarray:
    """Whether each window (``series[b]``, ``origins[b]``) fits its partners with the week (B,) rather than the day.

    ``y`` (N, W) is the padded target array and ``first_col`` (N,) each row's first column. A window takes the week
    where its series holds ``PARTNER_WEEKS`` weeks of history up to the origin and, over the periods of those weeks,
    the week-ago value's mean absolute error is below the day-ago value's. Only columns up to each origin are read.
    """
    span = partner_history(week)
    low = np.maximum(origins + 1 - span, 0)
    errors = []
    for lag in (day, week):
        sums, counts = _lag_error_sums(y, lag)
        total = sums[series, origins + 1] - sums[series, low]
        count = counts[series, origins + 1] - counts[series, low]
        errors.append(np.where(count > 0, total / np.maximum(count, 1), np.inf))
    return (origins + 1 - first_col[series] >= span) & (errors[1] < errors[0])
