"""Long-run decomposition of each series (trend line and seasonal profile), known at every origin.

The encoder reads one or two seasons of history, too few to tell a stable seasonal
pattern or a lasting trend from noise; exponential smoothing and the Theta method
estimate them from the whole series. This module gives the network the same
information as inputs, from a classical decomposition around a centred moving average
(2 x m for even m), over the seasons before each origin, in the window's scaled units:

- **seasonal profile** (two channels): the mean deviation of every season position from
  the moving average over up to ``PROFILE_CYCLES`` seasons, additive (``y - ma``) and multiplicative (``y / ma - 1``, times the
  latest moving average, so an amplitude that grows with the level is carried at
  today's level);
- **trend line** (one channel): the latest moving average known at the origin,
  extrapolated with its slope over up to ``TREND_CYCLES`` seasons (a deseasonalised drift).

All are fed to the encoder at every history step and to the decoder at every horizon step.
No value after the origin is used: the moving average at column ``c`` reads up to
``c + lead``, so only columns ``c <= origin - lead`` count. Running sums per season
position and forward/backward indexes make every lookup O(1), with no per-window Python.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Seasons averaged into the seasonal profile: enough to average out noise, few enough to follow a
# pattern that evolves (5 beat 10 on the Tourism validation folds and tied on M3; see benchmarks/history/rounds-01-06.md,
# fifth round).
PROFILE_CYCLES = 5
# Seasons over which the trend line's slope is measured: a long-run drift (4 did worse, 25 no better).
TREND_CYCLES = 10
# Input channels of the seasonal profile (additive, multiplicative) and of the trend line.
SEASONAL_CHANNELS = 2
TREND_CHANNELS = 1
# Bound on an input value, in window scales: ratios to a moving average near zero (a series
# crossing zero, an intermittent one) could otherwise feed the network values in the thousands.
# Real seasonal profiles stay well inside it (at most 12.2 over every origin of M3 monthly, over 10 seasons).
PROFILE_LIMIT = 20.0


@dataclass(frozen=True)
class DecompositionTable:
    """Precomputed moving average, running sums and indexes for O(1) lookups per window.

    ``sums[k, i, c]`` is the sum of the deviations of series ``i`` at columns ``c, c - m,
    c - 2m, ...`` (observed ones only), ``counts`` the number of them; ``k = 0`` holds the
    differences ``y - ma``, ``k = 1`` the ratios ``y / ma - 1`` (where ``ma > 0``).
    """

    season_length: int
    lead: int  # periods after a column that its centred moving average reads
    level: np.ndarray  # (N, W) the centred moving average, NaN where incomplete
    sums: np.ndarray | None = None  # (2, N, W), None without a seasonal profile
    counts: np.ndarray | None = None  # (2, N, W)
    # Trend-line indexes, None without a trend line:
    level_before: np.ndarray | None = None  # (N, W) last column <= c with a moving average (-1 if none)
    level_after: np.ndarray | None = None  # (N, W) first column >= c with a moving average (W if none)

    @property
    def seasonal(self) -> bool:
        return self.sums is not None

    @property
    def trend(self) -> bool:
        return self.level_before is not None

    @property
    def channels(self) -> int:
        """Input channels per step that the decomposition adds."""
        return SEASONAL_CHANNELS * self.seasonal + TREND_CHANNELS * self.trend


@dataclass(frozen=True)
class WindowDecomposition:
    """What each window knows of its series' decomposition at its origin, in window units."""

    seasonal: np.ndarray | None  # (B, m, 2) additive and multiplicative profile per season position
    trend_anchor: np.ndarray | None = None  # (B,) column of the latest moving average known (-1: none)
    trend_level: np.ndarray | None = None  # (B,) that moving average, minus the window loc, over its scale
    trend_slope: np.ndarray | None = None  # (B,) slope of the moving average per period, over the scale


def history_needed(table: DecompositionTable) -> int:
    """Periods up to an origin that the table's parts can read (to keep when storing a history tail)."""
    cycles = max(PROFILE_CYCLES * table.seasonal, TREND_CYCLES * table.trend)
    return (cycles + 1) * table.season_length + table.lead + 1


def centred_moving_average(y: np.ndarray, m: int) -> tuple[np.ndarray, int]:
    """The 2 x m (even m) or m (odd m) centred moving average of each row, NaN where any input is missing."""
    n, width = y.shape
    finite = np.isfinite(y)
    zero = np.zeros((n, 1))
    sums = np.concatenate([zero, np.where(finite, y, 0.0).cumsum(axis=1)], axis=1)
    seen = np.concatenate([zero, finite.cumsum(axis=1)], axis=1)
    trailing = np.full((n, width), np.nan)  # mean of columns c - m + 1 .. c
    if m <= width:
        complete = (seen[:, m:] - seen[:, :-m]) == m
        trailing[:, m - 1 :] = np.where(complete, (sums[:, m:] - sums[:, :-m]) / m, np.nan)
    lead = m // 2
    centred = np.full((n, width), np.nan)
    if lead < width:
        if m % 2:
            centred[:, : width - lead] = trailing[:, lead:]
        else:
            centred[:, : width - lead] = 0.5 * (trailing[:, lead:] + trailing[:, lead - 1 : width - 1])
    return centred, lead


def _season_running_sums(y: np.ndarray, centred: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Running sums and counts of the additive and multiplicative deviations per season position."""
    with np.errstate(all="ignore"):
        deviations = np.stack([y - centred, np.where(centred > 0, y / centred - 1.0, np.nan)])
    seen = np.isfinite(deviations)
    _, n, width = deviations.shape
    blocks = -(-width // m)
    padded = np.zeros((2, 2, n, blocks * m))
    padded[0, ..., :width] = np.where(seen, deviations, 0.0)
    padded[1, ..., :width] = seen
    strided = padded.reshape(2, 2, n, blocks, m).cumsum(axis=3).reshape(2, 2, n, blocks * m)[..., :width]
    return strided[0], strided[1].astype(np.int32)


def decomposition_table(
    y: np.ndarray, season_length: int, seasonal: bool = True, trend: bool = True
) -> DecompositionTable | None:
    """Precompute the decomposition of a padded target array ``y`` (N, W).

    The seasonal profile needs ``season_length >= 2`` (without it the moving average is the
    series itself and only the trend line is given). None when nothing is left to give.
    """
    m = max(int(season_length), 1)
    seasonal = seasonal and m >= 2
    if not (seasonal or trend):
        return None
    centred, lead = centred_moving_average(y, m)
    sums, counts = _season_running_sums(y, centred, m) if seasonal else (None, None)
    before, after = _level_indexes(centred) if trend else (None, None)
    return DecompositionTable(m, lead, centred, sums, counts, before, after)


def _level_indexes(centred: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per column, the last column at or before it and the first at or after it with a moving average."""
    n, width = centred.shape
    columns = np.broadcast_to(np.arange(width), (n, width))
    has_level = np.isfinite(centred)
    before = np.maximum.accumulate(np.where(has_level, columns, -1), axis=1).astype(np.int32)
    after = np.minimum.accumulate(np.where(has_level, columns, width)[:, ::-1], axis=1)[:, ::-1]
    return before, np.ascontiguousarray(after, dtype=np.int32)


def window_decomposition(
    table: DecompositionTable, series: np.ndarray, origins: np.ndarray, loc: np.ndarray, scale: np.ndarray
) -> WindowDecomposition:
    """Seasonal profile and trend line of windows (series, origin), in units of ``(y - loc) / scale``.

    Computed once per window, then read at any column with :func:`at_columns`.
    """
    cutoff = origins - table.lead  # last column whose moving average is known at the origin
    seasonal = _seasonal_profile(table, series, cutoff, scale) if table.seasonal else None
    if not table.trend:
        return WindowDecomposition(seasonal)
    return WindowDecomposition(seasonal, *_trend(table, series, cutoff, loc, scale))


def _seasonal_profile(table: DecompositionTable, series: np.ndarray, cutoff: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Profile (B, m, 2) of every season position; channel 1 is times the latest moving average.

    Each channel is centred to sum to zero over the season positions seen, zero when the
    history before the origin holds no complete deviation yet (or, for channel 1, no
    positive level), and clipped to ``PROFILE_LIMIT`` window scales.
    """
    m = table.season_length
    positions = np.arange(m)
    latest = cutoff[:, None] - np.mod(cutoff[:, None] - positions[None, :], m)  # (B, m) last column per position
    oldest = latest - PROFILE_CYCLES * m
    rows = series[:, None]

    def window_sum(array: np.ndarray) -> np.ndarray:  # (2, B, m) sums over the last PROFILE_CYCLES seasons
        end = np.where(latest >= 0, array[:, rows, np.maximum(latest, 0)], 0.0)
        start = np.where(oldest >= 0, array[:, rows, np.maximum(oldest, 0)], 0.0)
        return end - start

    total, count = window_sum(table.sums), window_sum(table.counts)
    known = count > 0
    mean = np.where(known, total / np.maximum(count, 1), 0.0)
    centre = mean.sum(axis=2) / np.maximum(known.sum(axis=2), 1)
    profile = np.where(known, mean - centre[..., None], 0.0)
    level = table.level[series, np.maximum(cutoff, 0)]
    level = np.where((cutoff >= 0) & np.isfinite(level) & (level > 0), level, 0.0)
    profile[1] *= level[:, None]
    return np.clip(profile / scale[None, :, None], -PROFILE_LIMIT, PROFILE_LIMIT).transpose(1, 2, 0)


def _trend(table: DecompositionTable, series: np.ndarray, cutoff: np.ndarray, loc: np.ndarray, scale: np.ndarray):
    """Anchor column, level and slope of the trend line known at each window's origin.

    The slope is that of the moving average between its latest value known at the origin
    and its first value at most ``TREND_CYCLES`` seasons earlier; zero over less than one season.
    """
    m, width = table.season_length, table.level.shape[1]
    end = np.where(cutoff >= 0, table.level_before[series, np.clip(cutoff, 0, width - 1)], -1)
    start = table.level_after[series, np.clip(cutoff - TREND_CYCLES * m, 0, width - 1)]
    has_level = end >= 0
    span = end - start
    last = table.level[series, np.maximum(end, 0)]
    first = table.level[series, np.clip(start, 0, width - 1)]
    slope = np.where(has_level & (span >= m), (last - first) / np.maximum(span, 1), 0.0) / scale
    level = np.where(has_level, (last - loc) / scale, 0.0)
    return end, level, slope


def at_columns(decomposition: WindowDecomposition, cols: np.ndarray) -> np.ndarray:
    """Input channels (B, K, channels) at columns ``cols`` (B, K): seasonal profile, then trend line."""
    parts = []
    if decomposition.seasonal is not None:
        position = np.mod(cols, decomposition.seasonal.shape[1])
        parts.append(np.take_along_axis(decomposition.seasonal, position[..., None], axis=1))
    if decomposition.trend_anchor is not None:
        anchor = decomposition.trend_anchor[:, None]
        line = decomposition.trend_level[:, None] + decomposition.trend_slope[:, None] * (cols - anchor)
        parts.append(np.clip(np.where(anchor >= 0, line, 0.0), -PROFILE_LIMIT, PROFILE_LIMIT)[..., None])
    return np.concatenate(parts, axis=2)
