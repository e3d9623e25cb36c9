"""A long DataFrame as padded, time-aligned arrays.

Layout: every series occupies one row of width ``W = pad + max_length + horizon``
and ends at the same column, ``last_col``. The ``pad`` columns on the left let any
encoder window be gathered by plain integer indexing; the ``horizon`` columns on the
right hold future-known covariates for prediction. Column ``c`` of series ``i`` is
the grid period ``end_i - (last_col - c)``.
"""

from __future__ import annotations

import contextlib
import reprlib
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
from pandas.tseries.frequencies import to_offset

from .decomposition import DecompositionTable, decomposition_table
from .features import FeatureSpec, encode_statics, scale_columns
from .frequency import _MONTHLY, _QUARTERLY, _SEMI_MONTHLY, _YEARLY, build_grid, calendar_features
from .roles import CovariateRoles, LeakageError
from .validation import Columns, when


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


# A panel lays every series on one calendar. Past this many periods, and this many per row of data,
# the calendar would cost far more than the data (two short minutely series 20 years apart: 10^7
# periods for 20 rows), so the panel is refused with a message instead of exhausting memory.
MAX_CALENDAR_PERIODS = 2_000_000
MAX_PERIODS_PER_ROW = 100


def check_calendar_span(times: pd.Series, offset: pd.DateOffset, n_rows: int) -> None:
    """Refuse data whose calendar span is absurd next to its size, before anything is allocated.

    Raises:
        ValueError: the span holds more than ``MAX_CALENDAR_PERIODS`` periods and more than
            ``MAX_PERIODS_PER_ROW`` per row of data.
    """
    first, last = times.min(), times.max()
    if isinstance(offset, pd.offsets.Tick):
        periods = int((last - first) // pd.Timedelta(offset)) + 1
    else:  # calendar offsets (weeks, months, years): even centuries stay small; count only when long
        years = (last - first).days / 365.25
        periods = int(years * 366 / max(1, (pd.Timestamp("2001-01-01") + offset - pd.Timestamp("2001-01-01")).days)) + 1
    if periods > MAX_CALENDAR_PERIODS and periods > MAX_PERIODS_PER_ROW * n_rows:
        raise ValueError(
            f"The data spans {periods:,} periods of {offset.freqstr!r} from {when(first)} to {when(last)} but holds only "
            f"{n_rows:,} rows: every series is laid on one calendar, which would cost far more memory than the data. "
            "Check `freq`, resample to a coarser frequency, or forecast series that lie far apart in time separately."
        )


def check_on_grid(times: pd.Series, ids: pd.Series, offset: pd.DateOffset, argument: str = "df") -> None:
    """Raise ``ValueError`` naming the first timestamp (and its series) that is not on the ``offset`` calendar.

    A backtest places its cutoffs on that calendar before any fit checks the data, so a stray
    timestamp would otherwise drop its series from every fold under a wrong cutoff.
    """
    if len(times):
        _positions(times, build_grid(times.min(), times.max(), offset, 0, 0), ids, offset, argument)


def _positions(times: pd.Series, grid: pd.DatetimeIndex, ids: pd.Series, offset: pd.DateOffset, argument: str) -> np.ndarray:
    pos = grid.get_indexer(pd.DatetimeIndex(times.to_numpy()))
    off = pos < 0
    if off.any():
        row = int(np.flatnonzero(off)[0])
        own = _own_frequency(times, ids, offset, first=[ids.iloc[row]])
        if own is not None:
            raise ValueError(_spacing_message(argument, *own, offset))
        raise ValueError(
            f"`{argument}`: timestamp {when(times.iloc[row])} of series {ids.iloc[row]!r} is not on the "
            f"{offset.freqstr!r} grid; check `freq` or resample the data."
        )
    return pos


# Words for the data's own frequency in messages, by the offset's base name (see `frequency`).
_WORDS = {
    **dict.fromkeys(_YEARLY, "yearly"),
    **dict.fromkeys(_QUARTERLY, "quarterly"),
    **dict.fromkeys(_MONTHLY, "monthly"),
    **dict.fromkeys(_SEMI_MONTHLY, "semi-monthly"),
    "W": "weekly",
    "D": "daily",
    "B": "business-daily",
    "h": "hourly",
    "H": "hourly",
    "min": "minutely",
    "T": "minutely",
}


def _own_frequency(times: pd.Series, ids: pd.Series, offset: pd.DateOffset, first: list | None = None, limit: int = 20):
    """(alias, series id) of a series whose own regular spacing (by ``pd.infer_freq``) is not ``offset``, else None.

    Looks at the series in ``first``, then at the longest ones, ``limit`` in all.
    """
    frame = pd.DataFrame({"id": ids.to_numpy(), "ds": times.to_numpy()})
    sizes = frame.groupby("id", sort=False).size()
    longest = sizes[sizes >= 3].sort_values(ascending=False, kind="stable").index.tolist()
    candidates = list(dict.fromkeys([uid for uid in (first or []) if uid in sizes.index and sizes[uid] >= 3] + longest))
    groups = frame.groupby("id", sort=False)["ds"]
    for uid in candidates[:limit]:
        stamps = pd.DatetimeIndex(np.unique(groups.get_group(uid).to_numpy()))
        try:  # only ever on the way to an error: never let it raise a worse one
            alias = pd.infer_freq(stamps)
            on_model_grid = stamps.equals(pd.date_range(stamps[0], periods=len(stamps), freq=offset))
        except (ValueError, TypeError):
            continue
        if alias is not None and not on_model_grid:
            return alias, uid
    return None


def _spacing_message(argument: str, alias: str, uid, offset: pd.DateOffset) -> str:
    own = to_offset(alias)
    word = _WORDS.get(own.name.split("-")[0]) if own.n == 1 else None
    looks = f"{word} ({alias!r}, e.g. series {uid!r})" if word else f"spaced {alias!r} apart (e.g. series {uid!r})"
    return (
        f"`{argument}`: the data looks {looks} but the model's frequency is {offset.freqstr!r}; "
        f"refit with freq={alias!r} or resample the data to {offset.freqstr!r}."
    )


def _spacing_mismatch(frame, columns: Columns, codes, pos, uniques, gapped, offset: pd.DateOffset, strict: bool) -> str | None:
    """The message for gapped series when the data's own spacing is not the model's frequency, else None.

    Every series' steps a multiple ``k > 1`` of the model's period (quarterly data, monthly model), or a
    gapped series regularly spaced at another frequency: the fix is ``freq``, not filling gaps. With
    ``strict=False`` (``fill_gaps=True``: gaps are allowed) it takes both: every step a multiple ``k > 1``
    and a series that ``pd.infer_freq`` finds regular at another frequency.
    """
    same = codes[1:] == codes[:-1]
    steps = np.diff(pos)[same]
    k = int(np.gcd.reduce(steps)) if len(steps) else 1
    if not strict and k <= 1:
        return None
    own = _own_frequency(frame[columns.time], frame[columns.id], offset, first=list(uniques[gapped]))
    if own is not None:
        return _spacing_message("df", *own, offset)
    if k > 1 and strict:
        return _spacing_message("df", (offset * k).freqstr, uniques[int(np.flatnonzero(gapped)[0])], offset)
    return None


def layout(frame: pd.DataFrame, columns: Columns, offset: pd.DateOffset, pad: int, horizon: int, fill_gaps: bool):
    """Where each row of a cleaned frame lies on one calendar, or a clear error.

    Returns ``(codes, uniques, grid, pos, end, length)``: each row's series code, the ids, the calendar
    (``pad`` periods before the first timestamp, ``horizon`` after the last), each row's grid position, and
    each series' last position and length. Raises on timestamps off the frequency, and on gaps unless
    ``fill_gaps`` (then the missing periods are left for the panel to mask).
    """
    ids_col = frame[columns.id]
    codes, uniques = pd.factorize(ids_col, sort=False)
    n_series = len(uniques)
    times = frame[columns.time]
    check_calendar_span(times, offset, len(frame))
    grid = build_grid(times.min(), times.max(), offset, before=pad, after=horizon)
    pos = _positions(times, grid, ids_col, offset, "df")
    start = np.full(n_series, np.iinfo(np.int64).max)
    end = np.full(n_series, -1)
    np.minimum.at(start, codes, pos)
    np.maximum.at(end, codes, pos)
    length = end - start + 1
    counts = np.bincount(codes, minlength=n_series)
    gapped = counts < length
    if gapped.any():
        mismatch = _spacing_mismatch(frame, columns, codes, pos, uniques, gapped, offset, strict=not fill_gaps)
        if mismatch is not None:
            raise ValueError(mismatch)
        if not fill_gaps:
            raise ValueError(_gap_message(uniques, codes, pos, start, gapped, grid, columns))
    return codes, uniques, grid, pos, end, length


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
        static=encode_statics(per_series, roles.static, spec),
        past_names=roles.past,
        future_names=roles.future,
    )


def refuse_short(ids: np.ndarray, length: np.ndarray, horizon: int) -> None:
    """Raise, naming them, when series are shorter than one horizon: no training window fits them."""
    short = length < horizon
    if short.any():
        raise ValueError(
            f"Series {np.asarray(ids)[short][:5].tolist()} are shorter than one horizon ({horizon} periods); "
            "drop them or lower `horizon`."
        )


# The warning for series shorter than the encoder window, as a filter matches it.
SHORT_HISTORY_MESSAGE = ".*less history than input_size.*"


@contextlib.contextmanager
def padding_expected(expected: bool = True) -> Iterator[None]:
    """Silence the short-history warning where padded windows are expected: the window is a prior's (trained on
    padded windows, and not the user's to change) or a pretraining corpus pads short series on purpose."""
    with warnings.catch_warnings():
        if expected:
            warnings.filterwarnings("ignore", message=SHORT_HISTORY_MESSAGE)
        yield


def _warn_short(uniques, length: np.ndarray, input_size: int) -> None:
    """One warning for all series whose history is shorter than the encoder window."""
    short = length < input_size
    if short.any():
        warnings.warn(
            f"{int(short.sum())} of {len(length)} series have less history than input_size={input_size} periods "
            f"(shortest: {int(length.min())}; e.g. {reprlib.repr(list(uniques[short]))}): their encoder windows are padded "
            "before the first observation.",
            UserWarning,
            stacklevel=6,  # here <- build_panel <- model_panel <- the estimator <- fit/predict <- the caller
        )


def _gap_message(uniques, codes, pos, start, gapped, grid, columns: Columns) -> str:
    first = int(np.flatnonzero(gapped)[0])
    seen = np.sort(pos[codes == first])
    expected = np.arange(start[first], start[first] + len(seen) + 1)
    missing = (
        int(expected[np.flatnonzero(expected[: len(seen)] != seen)[0]])
        if (expected[: len(seen)] != seen).any()
        else int(seen[-1] + 1)
    )
    names = reprlib.repr(list(uniques[gapped]))
    return (
        f"Series {names} have gaps in `{columns.time}`; the first missing timestamp is {when(grid[missing])} "
        f"in series {uniques[first]!r}. Fill them (NaN targets are allowed) or pass fill_gaps=True."
    )


def _place_future(fut, future, columns, roles, spec, grid, offset, uniques, end, last_col, horizon) -> None:
    future = future.loc[future[columns.time] <= grid[-1]]
    index = pd.Index(uniques)
    codes = index.get_indexer(future[columns.id])
    unknown = codes < 0
    if unknown.any():
        raise ValueError(
            f"`future_df` has series {reprlib.repr(sorted(set(future[columns.id][unknown].tolist()), key=str))} "
            "that are not in the history."
        )
    pos = _positions(future[columns.time], grid, future[columns.id], offset, "future_df")
    step = pos - end[codes]
    early = step <= 0
    if early.any():
        row = int(np.flatnonzero(early)[0])
        raise LeakageError(
            f"`future_df` has timestamp {when(future[columns.time].iloc[row])} for series {uniques[codes[row]]!r}, "
            "at or before the end of its history; it must hold only the horizon after the history."
        )
    keep = step <= horizon
    covered = np.zeros((len(uniques), horizon), dtype=bool)
    covered[codes[keep], step[keep] - 1] = True
    if not covered.all():
        series, missing_step = np.argwhere(~covered)[0]
        stamp = grid[end[series] + missing_step + 1]
        raise ValueError(
            f"`future_df` lacks the future covariates of series {uniques[series]!r} at {when(stamp)} "
            f"(step {missing_step + 1} of {horizon}); it must cover every horizon step."
        )
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
    _place_future(fut, future, columns, roles, spec, panel.grid, offset, panel.ids, panel.end, panel.last_col, panel.horizon)
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
            f"{panel.ids[row]!r} at {pd.Timestamp(stamp)} ({int(bad.sum())} negative values in all)."
        )
    with np.errstate(invalid="ignore"):
        return replace(panel, y=np.log1p(panel.y))


def with_decomposition(panel: Panel, season_length: int, seasonal: bool, trend: bool) -> Panel:
    """The panel with its long-run decomposition table (see :mod:`forecaster.data.decomposition`)."""
    return replace(panel, decomposition=decomposition_table(panel.y, season_length, seasonal, trend))
