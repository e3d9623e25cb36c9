"""A long DataFrame as padded, time-aligned arrays.

Layout: every series occupies one row of width ``W = pad + max_length + horizon``
and ends at the same column, ``last_col``. The ``pad`` columns on the left let any
encoder window be gathered by plain integer indexing; the ``horizon`` columns on the
right hold future-known covariates for prediction. Column ``c`` of series ``i`` is
the grid period ``end_i - (last_col - c)``.
"""

from __future__ import annotations

import contextlib
import contextvars
import reprlib
from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ..callers import warn_user
from .decomposition import DecompositionTable, decomposition_table
from .features import FeatureSpec, encode_statics, scale_columns
from .frames import shown_id, shown_ids
from .frequency import calendar_features
from .placement import MAX_CALENDAR_PERIODS, MAX_PERIODS_PER_ROW, check_calendar_span, check_on_grid, layout, positions
from .roles import CovariateRoles, LeakageError
from .seen_values import warn_unseen_values
from .validation import Columns, check_future_rows, check_id_types, when

# Where rows lie on the calendar is checked in ``placement``; its checks stay importable from here.
__all__ = [
    "MAX_CALENDAR_PERIODS",
    "MAX_PERIODS_PER_ROW",
    "SHORT_HISTORY_MESSAGE",
    "Panel",
    "build_panel",
    "check_calendar_span",
    "check_on_grid",
    "layout",
    "log_target",
    "padding_expected",
    "refuse_short",
    "with_decomposition",
    "with_future",
]


@dataclass(frozen=True)
class Panel:
    """Padded arrays of a panel; NaN marks missing or padded values."""

    ids: np.ndarray  # (N,) series ids in output order
    grid: pd.DatetimeIndex  # (G,) calendar; grid positions index it
    end: np.ndarray  # (N,) grid position of each series' last timestamp
    length: np.ndarray  # (N,) periods from first to last timestamp
    pad: int
    horizon: int
    y: np.ndarray  # (N, W) float64 target
    past: np.ndarray  # (N, W, Cp) float32 standardised past covariates, 0 where missing
    future: np.ndarray  # (N, W, Cf) float32 standardised future-known covariates
    calendar: np.ndarray  # (G, Cc) float32 calendar features of each grid period
    static: np.ndarray  # (N, S) float32
    past_names: tuple[str, ...]
    future_names: tuple[str, ...]
    decomposition: DecompositionTable | None = None  # long-run trend line and seasonal profile inputs, when set

    @property
    def encoder_features(self) -> int:
        """Channels per history step besides the target: past covariates, calendar, decomposition."""
        return self.past.shape[2] + self.calendar.shape[1] + self.decomposition_channels

    @property
    def decoder_features(self) -> int:
        """Channels per horizon step: future-known covariates, calendar, decomposition."""
        return self.future.shape[2] + self.calendar.shape[1] + self.decomposition_channels

    @property
    def decomposition_channels(self) -> int:
        return self.decomposition.channels if self.decomposition is not None else 0

    @property
    def last_col(self) -> int:
        return self.y.shape[1] - self.horizon - 1

    @property
    def first_col(self) -> np.ndarray:
        """(N,) first column inside each series (columns before it are padding)."""
        return self.last_col - self.length + 1

    def grid_position(self, series: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Grid positions of columns ``cols`` of ``series`` (broadcasting)."""
        return self.end[series] - self.last_col + cols

    def timestamps(self, series: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Timestamps (datetime64) of columns of series; positions off the grid give NaT."""
        pos = self.grid_position(series, cols)
        inside = (pos >= 0) & (pos < len(self.grid))
        out = np.full(pos.shape, np.datetime64("NaT"), dtype="datetime64[ns]")
        out[inside] = self.grid.to_numpy()[pos[inside]]
        return out


def build_panel(
    frame: pd.DataFrame,
    columns: Columns,
    roles: CovariateRoles,
    spec: FeatureSpec,
    offset: pd.DateOffset,
    pad: int,
    horizon: int,
    future: pd.DataFrame | None = None,
    fill_gaps: bool = False,
) -> Panel:
    """Turn cleaned, sorted frames into a :class:`Panel`.

    Args:
        frame: cleaned history (see :func:`clean_history`).
        future: cleaned future-known covariates for the ``horizon`` periods after each
            series' end; rows past the horizon are ignored.
        fill_gaps: place series with missing periods on the grid and mask the gaps
            instead of raising.
    """
    codes, uniques, grid, pos, end, length = layout(frame, columns, offset, pad, horizon, fill_gaps)
    n_series = len(uniques)
    _warn_short(uniques, length, pad)
    max_len = int(length.max())
    width = pad + max_len + horizon
    last_col = pad + max_len - 1
    cols = last_col - (end[codes] - pos)

    y = np.full((n_series, width), np.nan)
    y[codes, cols] = frame[columns.target].to_numpy(dtype=np.float64)
    past = np.zeros((n_series, width, len(roles.past)), dtype=np.float32)
    past[codes, cols] = np.nan_to_num(scale_columns(frame, roles.past, spec), nan=0.0)
    fut = np.zeros((n_series, width, len(roles.future)), dtype=np.float32)
    fut[codes, cols] = scale_columns(frame, roles.future, spec)
    if future is not None and roles.future:
        _place_future(fut, future, columns, roles, spec, grid, offset, uniques, end, last_col, horizon)
    per_series = (
        frame.groupby(codes, sort=True)[list(roles.static)].first() if roles.static else pd.DataFrame(index=range(n_series))
    )
    return Panel(
        ids=np.asarray(uniques),
        grid=grid,
        end=end,
        length=length,
        pad=pad,
        horizon=horizon,
        y=y,
        past=past,
        future=fut,
        calendar=calendar_features(grid, offset),
        static=encode_statics(per_series, roles.static, spec, np.asarray(uniques)),
        past_names=roles.past,
        future_names=roles.future,
    )


def refuse_short(ids: np.ndarray, length: np.ndarray, horizon: int) -> None:
    """Raise, naming them, when series are shorter than one horizon: no training window fits them."""
    short = length < horizon
    if short.any():
        raise ValueError(
            f"{int(short.sum())} of {len(length)} series are shorter than one horizon ({horizon} periods): "
            f"{shown_ids(np.asarray(ids)[short])}; drop them or lower `horizon`."
        )


# The warning for series shorter than the encoder window, as a filter matches it.
SHORT_HISTORY_MESSAGE = ".*less history than input_size.*"


# Set by ``padding_expected`` for the block's own thread (a context variable, not the process-wide warning filters,
# which a block overlapping worker threads' own blocks could leave changed: ``callers.silenced``).
_PADDING_EXPECTED: contextvars.ContextVar[bool] = contextvars.ContextVar("padding_expected", default=False)


@contextlib.contextmanager
def padding_expected(expected: bool = True) -> Iterator[None]:
    """Silence the short-history warning where padded windows are expected: the window is a prior's (trained on
    padded windows, and not the user's to change) or a pretraining corpus pads short series on purpose."""
    token = _PADDING_EXPECTED.set(expected or _PADDING_EXPECTED.get())  # an enclosing block's expectation holds
    try:
        yield
    finally:
        _PADDING_EXPECTED.reset(token)


def _warn_short(uniques, length: np.ndarray, input_size: int) -> None:
    """One warning for all series whose history is shorter than the encoder window (none where padding is expected)."""
    short = length < input_size
    if short.any() and not _PADDING_EXPECTED.get():
        warn_user(
            f"{int(short.sum())} of {len(length)} series have less history than input_size={input_size} periods "
            f"(shortest: {int(length.min())}; e.g. {reprlib.repr(list(uniques[short]))}): their encoder windows are padded "
            "before the first observation."
        )


def _place_future(fut, future, columns, roles, spec, grid, offset, uniques, end, last_col, horizon, check_values=True) -> None:
    """Place the horizon's future-known covariates; ``check_values``: warn where they take values the fit never saw
    (``seen_values``)."""
    future = future.loc[future[columns.time] <= grid[-1]]
    index = pd.Index(uniques)
    codes = index.get_indexer(future[columns.id])
    if (codes < 0).any():  # ids that match none: other series, or the same ones typed otherwise (7 against '7')
        check_id_types(index, future[columns.id], columns.id, "`future_df`", "the history")
    future, codes = future.loc[codes >= 0], codes[codes >= 0]  # rows of other series are not read (a whole calendar)
    pos = positions(future[columns.time], grid, future[columns.id], offset, "future_df")
    step = pos - end[codes]
    early = step <= 0
    if early.any():
        row = int(np.flatnonzero(early)[0])
        raise LeakageError(
            f"`future_df` has timestamp {when(future[columns.time].iloc[row])} for series {shown_id(uniques[codes[row]])}, "
            "at or before the end of its history; it must hold only the horizon after the history."
        )
    keep = step <= horizon
    check_future_rows(future.loc[keep], columns, roles)
    covered = np.zeros((len(uniques), horizon), dtype=bool)
    covered[codes[keep], step[keep] - 1] = True
    if not covered.all():
        series, missing_step = np.argwhere(~covered)[0]
        stamp = grid[end[series] + missing_step + 1]
        ended = ""
        if end[series] < end.max():  # a series whose history stops before the others' (its last observed target)
            ended = (
                f" Its history ends at {when(grid[end[series]])}, before the latest series' ({when(grid[end.max()])}): "
                "it is forecast from its own last observation, so its horizon starts there. Leave it out of the "
                "history (and future_df) if it has ended."
            )
        raise ValueError(
            f"`future_df` lacks the future covariates of series {shown_id(uniques[series])} at {when(stamp)} "
            f"(step {missing_step + 1} of {horizon}); it must cover every horizon step.{ended}"
        )
    if check_values:
        warn_unseen_values(future.loc[keep], roles.future, spec, columns.id, columns.time, when)
    values = scale_columns(future.loc[keep], roles.future, spec)
    fut[codes[keep], last_col + step[keep]] = values


def with_future(
    panel: Panel, future: pd.DataFrame, columns: Columns, roles: CovariateRoles, spec: FeatureSpec, offset: pd.DateOffset
) -> Panel:
    """The panel with the future-known covariates of the ``horizon`` periods after each series' end placed.

    For a panel built from a history alone (as ``fit`` builds it), so that the same panel
    can then forecast its horizon; raises as :func:`build_panel` does for bad rows.
    """
    if not roles.future:
        return panel
    fut = panel.future.copy()
    fut[:, panel.last_col + 1 :] = 0.0
    # A backtest's folds: the horizon holds the data's own values, so nothing is checked (docs/model.md).
    _place_future(
        fut, future, columns, roles, spec, panel.grid, offset, panel.ids, panel.end, panel.last_col, panel.horizon, False
    )
    return replace(panel, future=fut)


def log_target(panel: Panel, target: str) -> Panel:
    """The panel with its target as ``log(1 + y)``, for models of non-negative multiplicative series.

    ``log1p`` rather than ``log`` so that zeros (a quarter without visitors) are allowed.

    Raises:
        ValueError: a target value is negative (names the series and timestamp).
    """
    bad = np.isfinite(panel.y) & (panel.y < 0)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        stamp = panel.timestamps(np.array([row]), np.array([col]))[0]
        raise ValueError(
            f"`log_target=True` needs non-negative targets, but `{target}` is {panel.y[row, col]:g} for series "
            f"{shown_id(panel.ids[row])} at {pd.Timestamp(stamp)} ({int(bad.sum())} negative values in all)."
        )
    with np.errstate(invalid="ignore"):
        return replace(panel, y=np.log1p(panel.y))


def with_decomposition(panel: Panel, season_length: int, seasonal: bool, trend: bool) -> Panel:
    """The panel with its long-run decomposition table (see :mod:`forecaster.data.decomposition`)."""
    return replace(panel, decomposition=decomposition_table(panel.y, season_length, seasonal, trend))
