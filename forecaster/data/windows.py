"""Windowing: the only place where a forecast origin is applied.

A window is a pair (series row, origin column) into a :class:`Panel`. The encoder
block holds columns ``origin - input_size + 1 .. origin`` and the decoder block
``origin + 1 .. origin + horizon``; both are gathered by integer indexing, with no
per-window Python. Scale statistics come from the encoder block alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .decomposition import WindowDecomposition, at_columns, window_decomposition
from .panel import Panel
from .roles import CovariateRoles, LeakageError, encoder_columns
from .scaling import NaiveErrorTable, loss_scale, window_stats

# A window whose history is very smooth relative to its spread (a near-deterministic trend)
# could otherwise carry hundreds of times the average weight and dominate the gradient.
MAX_LOSS_WEIGHT = 10.0


@dataclass(frozen=True)
class Batch:
    """Network inputs (and optionally targets) for a set of windows."""

    past_target: np.ndarray  # (B, T) float32 scaled target, 0 where missing or padded
    past_observed: np.ndarray  # (B, T) float32 1 where the target was observed
    past_padded: np.ndarray  # (B, T) bool True before the series starts
    past_covariates: np.ndarray  # (B, T, Cp + Cc) float32 past covariates + calendar
    future_known: np.ndarray  # (B, H, Cf + Cc) float32 future-known covariates + calendar
    static: np.ndarray  # (B, S) float32
    loc: np.ndarray  # (B,) float64
    scale: np.ndarray  # (B,) float64
    target: np.ndarray | None = None  # (B, H) float32 scaled target, 0 where missing
    target_observed: np.ndarray | None = None  # (B, H) bool
    target_weight: np.ndarray | None = None  # (B,) float32 loss weight of each window


def observed_cumsum(panel: Panel) -> np.ndarray:
    """(N, W + 1) observed targets per series up to each column (column c + 1 counts columns 0..c)."""
    observed = np.isfinite(panel.y).astype(np.int64)
    return np.concatenate([np.zeros((len(observed), 1), dtype=np.int64), observed.cumsum(axis=1)], axis=1)


def admissible_origins(
    panel: Panel, input_size: int, horizon: int, last_target_col: np.ndarray, min_history: int
) -> tuple[np.ndarray, np.ndarray]:
    """All (series, origin) pairs whose target window ends by ``last_target_col`` per series.

    An origin needs ``min_history`` periods of history and at least one observed value
    both in its encoder window and in its target window.
    """
    cum = observed_cumsum(panel)
    first = panel.first_col + min_history - 1
    last = last_target_col - horizon
    n_origins = np.maximum(last - first + 1, 0)
    series = np.repeat(np.arange(len(panel.ids)), n_origins)
    offsets = np.arange(n_origins.sum()) - np.repeat(np.cumsum(n_origins) - n_origins, n_origins)
    origins = first[series] + offsets
    seen_before = cum[series, origins + 1] - cum[series, np.maximum(origins + 1 - input_size, 0)]
    seen_after = cum[series, origins + 1 + horizon] - cum[series, origins + 1]
    keep = (seen_before > 0) & (seen_after > 0)
    return series[keep], origins[keep]


def encoder_block(panel: Panel, roles: CovariateRoles, series: np.ndarray, origins: np.ndarray, input_size: int, scaler: str):
    """Encoder inputs and per-window scale statistics for windows ending at ``origins``.

    The single function that assembles encoder inputs: covariates pass through
    :func:`encoder_columns`, which refuses future-known columns, and only columns at
    or before each origin are read. Also returns each window's long-run decomposition
    (trend line, seasonal profile), computed once here for the decoder block too (None
    when the panel has none).
    """
    encoder_columns(roles, panel.past_names)
    if (origins > panel.last_col).any():
        raise LeakageError("An origin lies after the end of its series' history.")
    cols = origins[:, None] + np.arange(1 - input_size, 1)[None, :]
    rows = series[:, None]
    history = panel.y[rows, cols]
    loc, scale = window_stats(history, scaler)
    scaled = (history - loc[:, None]) / scale[:, None]
    observed = np.isfinite(scaled)
    padded = cols < panel.first_col[series][:, None]
    calendar = panel.calendar[panel.grid_position(rows, cols)]
    parts = [panel.past[rows, cols], calendar]
    decomposition = None
    if panel.decomposition is not None:
        decomposition = window_decomposition(panel.decomposition, series, origins, loc, scale)
        parts.append(at_columns(decomposition, cols))
    covariates = np.concatenate(parts, axis=2)
    return (
        np.where(observed, scaled, 0.0).astype(np.float32),
        observed.astype(np.float32),
        padded,
        covariates.astype(np.float32),
        loc,
        scale,
        decomposition,
    )


def decoder_block(
    panel: Panel, series: np.ndarray, origins: np.ndarray, horizon: int, decomposition: WindowDecomposition | None
) -> np.ndarray:
    """Future-known covariates, calendar features and decomposition of the ``horizon`` target periods.

    ``decomposition`` is what the encoder block computed from history up to each origin
    (None when the panel has none).
    """
    cols = origins[:, None] + np.arange(1, horizon + 1)[None, :]
    rows = series[:, None]
    calendar = panel.calendar[panel.grid_position(rows, cols)]
    parts = [panel.future[rows, cols], calendar]
    if decomposition is not None:
        parts.append(at_columns(decomposition, cols))
    return np.concatenate(parts, axis=2).astype(np.float32)


def assemble(
    panel: Panel,
    roles: CovariateRoles,
    series: np.ndarray,
    origins: np.ndarray,
    input_size: int,
    horizon: int,
    scaler: str,
    with_target: bool,
    naive_table: NaiveErrorTable | None = None,
) -> Batch:
    """Build a :class:`Batch` for the given windows; targets are scaled with the encoder's statistics.

    With ``naive_table``, each window's loss weight is ``scale / naive error``, which turns
    an error in window-scaled units into one relative to the series' in-sample
    seasonal-naive error up to the origin: the training loss then weighs series as MASE does.
    """
    past_target, past_observed, padded, covariates, loc, scale, decomposition = encoder_block(
        panel, roles, series, origins, input_size, scaler
    )
    target = target_observed = weight = None
    if with_target:
        cols = origins[:, None] + np.arange(1, horizon + 1)[None, :]
        raw = (panel.y[series[:, None], cols] - loc[:, None]) / scale[:, None]
        target_observed = np.isfinite(raw)
        target = np.where(target_observed, raw, 0.0).astype(np.float32)
        if naive_table is not None:
            weight = scale / loss_scale(naive_table, series, origins)
            weight = np.clip(np.where(np.isfinite(weight), weight, 1.0), 0.0, MAX_LOSS_WEIGHT).astype(np.float32)
    return Batch(
        past_target=past_target,
        past_observed=past_observed,
        past_padded=padded,
        past_covariates=covariates,
        future_known=decoder_block(panel, series, origins, horizon, decomposition),
        static=panel.static[series],
        loc=loc,
        scale=scale,
        target=target,
        target_observed=target_observed,
        target_weight=weight,
    )
