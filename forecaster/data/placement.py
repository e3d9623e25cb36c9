"""Where each row of a long frame lies on one calendar, and the errors that name what does not fit.

The panel lays every series on one calendar of the model's frequency. Before anything is allocated this module
refuses a span absurd next to the data's size, a timestamp off the frequency (naming the frequency the data
looks like when it has one of its own) and gaps (unless they are to be masked), each with the series and
timestamp at fault.
"""

from __future__ import annotations

import reprlib

import numpy as np
import pandas as pd
from pandas.tseries.frequencies import to_offset

from .clock_changes import skipped_hour_hint
from .dates import message_zone, shown_time
from .frames import shown_id
from .frequency import _MONTHLY, _QUARTERLY, _SEMI_MONTHLY, _YEARLY, build_grid
from .validation import Columns, when

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
        positions(times, build_grid(times.min(), times.max(), offset, 0, 0), ids, offset, argument)


def positions(times: pd.Series, grid: pd.DatetimeIndex, ids: pd.Series, offset: pd.DateOffset, argument: str) -> np.ndarray:
    """Each timestamp's position on ``grid``; raises naming the first one off it (``argument``: the frame's name)."""
    pos = grid.get_indexer(pd.DatetimeIndex(times.to_numpy()))
    off = pos < 0
    if off.any():
        row = int(np.flatnonzero(off)[0])
        own = _own_frequency(times, ids, offset, first=[ids.iloc[row]])
        if own is not None:
            raise ValueError(_spacing_message(argument, *own, offset))
        stamp = pd.Timestamp(times.iloc[row])
        clock = ""
        daily = len(grid) > 1 and grid[1] - grid[0] >= pd.Timedelta(days=1)  # one time of day: daily or coarser
        if daily and stamp.normalize() != stamp - (grid[0] - grid[0].normalize()):  # another time of day
            clock = f" (the grid's times are at {grid[0]:%H:%M:%S}, this one is at {stamp:%H:%M:%S})"
        raise ValueError(
            f"`{argument}`: timestamp {when(stamp)} of series {shown_id(ids.iloc[row])} is not on the "
            f"{offset.freqstr!r} grid{clock}; check `freq` or resample the data."
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
    looks = (
        f"{word} ({alias!r}, e.g. series {shown_id(uid)})" if word else f"spaced {alias!r} apart (e.g. series {shown_id(uid)})"
    )
    weeks = " ('W' means weeks ending on Sunday)" if offset.freqstr == "W-SUN" else ""
    if argument == "future_df":  # the model's calendar is settled by its history: the horizon's dates must follow it
        return (
            f"`future_df`: its dates look {looks} but the model's frequency is {offset.freqstr!r}{weeks}; date its rows "
            f"on the model's calendar, the {offset.freqstr!r} periods after each series' last timestamp."
        )
    return (
        f"`{argument}`: the data looks {looks} but the model's frequency is {offset.freqstr!r}{weeks}; "
        f"fit the model with freq={alias!r} (in a study spec: freq = {alias!r} under [data]) or resample the data to "
        f"{offset.freqstr!r}."
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
    pos = positions(times, grid, ids_col, offset, "df")
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
    absent = np.setdiff1d(np.arange(start[first], seen[-1] + 1), seen)
    hint = (
        "" if message_zone() or len(grid) < 2 else skipped_hour_hint(grid[absent], columns.time, grid[1] - grid[0])
    )  # naive: the user's clock times
    return (
        f"Series {names} have gaps in `{columns.time}`; the first missing timestamp is {when(shown_time(grid[missing], None))} "
        f"in series {shown_id(uniques[first])}. Fill them (NaN targets are allowed) or pass fill_gaps=True.{hint}"
    )
