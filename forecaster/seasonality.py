"""Long-run seasonal profile of each series, known at every forecast origin.

The encoder reads one or two seasons of history, too few to tell a stable seasonal
pattern from noise; exponential smoothing estimates its seasonal states from the whole
series. This module gives the network the same information as an input: for each
window, the average deviation of every season position from a centred moving average
(classical decomposition), over up to ``PROFILE_CYCLES`` seasons of history before the
origin, in the window's scaled units. Two channels: the additive profile, and the
multiplicative one (mean ratio to the moving average, minus 1) times the latest moving
average, so a seasonal amplitude that grows with the level is carried at today's level.
Both are fed to the encoder at every history step and to the decoder at every horizon step.

No value after the origin is used: a deviation at column ``c`` needs the moving
average up to ``c + lead``, so only columns ``c <= origin - lead`` count. Running sums
per season position make every lookup O(1), with no per-window Python.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Seasons of history averaged into the profile: enough to average out noise, few enough to follow drift.
PROFILE_CYCLES = 10
# Input channels the profile adds: additive and multiplicative.
PROFILE_CHANNELS = 2
# Bound on a profile value, in window scales: ratios to a moving average near zero (a series
# crossing zero, an intermittent one) could otherwise feed the network values in the thousands.
# Real seasonal profiles stay well inside it (at most 12.2 over every origin of M3 monthly).
PROFILE_LIMIT = 20.0


@dataclass(frozen=True)
class SeasonalProfileTable:
    """Running sums of the deviations from a centred moving average, per season position.

    ``sums[k, i, c]`` is the sum of the deviations of series ``i`` at columns ``c, c - m,
    c - 2m, ...`` (observed ones only), ``counts`` the number of them; ``k = 0`` holds the
    differences ``y - ma``, ``k = 1`` the ratios ``y / ma - 1`` (where ``ma > 0``).
    """

    season_length: int
    lead: int  # periods after a column that its centred moving average reads
    sums: np.ndarray  # (2, N, W)
    counts: np.ndarray  # (2, N, W)
    level: np.ndarray  # (N, W) the centred moving average itself


def history_needed(season_length: int) -> int:
    """Periods before an origin that the profile can read (to keep when storing a history tail)."""
    return (PROFILE_CYCLES + 1) * season_length + season_length // 2 + 1


def _centred_moving_average(y: np.ndarray, m: int) -> tuple[np.ndarray, int]:
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


def seasonal_profile_table(y: np.ndarray, season_length: int) -> SeasonalProfileTable | None:
    """Precompute the profile's running sums for a padded target array ``y`` (N, W); None without seasonality."""
    m = int(season_length)
    if m < 2:
        return None
    centred, lead = _centred_moving_average(y, m)
    with np.errstate(all="ignore"):
        deviations = np.stack([y - centred, np.where(centred > 0, y / centred - 1.0, np.nan)])
    seen = np.isfinite(deviations)
    _, n, width = deviations.shape
    blocks = -(-width // m)
    padded = np.zeros((2, 2, n, blocks * m))
    padded[0, ..., :width] = np.where(seen, deviations, 0.0)
    padded[1, ..., :width] = seen
    strided = padded.reshape(2, 2, n, blocks, m).cumsum(axis=3).reshape(2, 2, n, blocks * m)[..., :width]
    return SeasonalProfileTable(m, lead, strided[0], strided[1].astype(np.int32), centred)


def origin_profiles(table: SeasonalProfileTable, series: np.ndarray, origins: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Profile (B, m, 2) of every season position for windows (series, origin), in window units.

    Channel 0 is the additive profile, channel 1 the multiplicative one times the latest
    moving average known at the origin, both divided by the window ``scale``. Each is
    centred to sum to zero over the season positions seen, zero when the history before the
    origin holds no complete deviation yet (or, for channel 1, no positive level), and
    clipped to ``PROFILE_LIMIT`` window scales. Computed once per window and then read at
    any column with :func:`at_columns`.
    """
    m = table.season_length
    cutoff = origins - table.lead  # last column whose deviation is known at the origin
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


def at_columns(profiles: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Profile values (B, K, 2) at columns ``cols`` (B, K) from per-window profiles (B, m, 2)."""
    position = np.mod(cols, profiles.shape[1])
    return np.take_along_axis(profiles, position[..., None], axis=1)


def seasonal_profile(
    table: SeasonalProfileTable, series: np.ndarray, origins: np.ndarray, cols: np.ndarray, scale: np.ndarray
) -> np.ndarray:
    """Profile channels (B, K, 2) at columns ``cols`` (B, K) for windows (series, origin); see :func:`origin_profiles`."""
    return at_columns(origin_profiles(table, series, origins, scale), cols)
