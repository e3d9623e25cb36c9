"""Naive local clock times across a daylight-saving change, told apart in messages.

Hourly or finer data written in local clock time without a zone skips an hour when clocks go forward (02:00 on the
last Sunday of March in Europe) and repeats one when they go back. Read as they are, the skipped hour is a gap and
the repeated one a duplicate, and the messages said only that. These functions recognise the pattern (early-morning
hours, in the months the changes fall in) and say what to do: give ``ds`` its zone, since zoned sub-daily data is
read in UTC, where no hour is skipped or repeated.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

# The months in which daylight-saving changes fall, north (March, April; October, November) and south (September,
# October; April), and the latest local hour a change touches.
CHANGE_MONTHS = (3, 4, 9, 10, 11)
LATEST_HOUR = 3
# The zone in the examples: the user's own goes in its place.
ZONE = "Europe/Berlin"


def _at_a_change(stamps: pd.DatetimeIndex) -> bool:
    """Whether every one of ``stamps`` (naive) lies in the early-morning hours of a month a change falls in."""
    return len(stamps) > 0 and bool(((stamps.hour <= LATEST_HOUR) & stamps.month.isin(CHANGE_MONTHS)).all())


def repeated_hour_hint(times: pd.Series, column: str, id_col: str, step: pd.Timedelta | None) -> str:
    """A sentence for a duplicate-rows error whose repeated ``times`` (the rows involved) all fall in one early-morning
    hour of one day in a month of clock changes, in series spaced ``step`` apart, under a day; "" otherwise (zoned
    times, daily or coarser data, or other duplicates). The repeated hour is told apart by its order within each series
    (``ambiguous='infer'``)."""
    stamps = pd.DatetimeIndex(times)
    if not _sub_daily(step) or stamps.tz is not None or not _at_a_change(stamps) or stamps.floor("h").nunique() != 1:
        return ""
    day = stamps[0].date()
    return (
        f" The repeated times all fall in one early-morning hour of {day}: local clock times without a zone repeat "
        f"that hour when daylight-saving time ends. Give `{column}` its zone, series by series in time order (e.g. "
        f"df['{column}'] = df.groupby('{id_col}')['{column}'].transform(lambda s: s.dt.tz_localize('{ZONE}', "
        "ambiguous='infer'))); sub-daily data with a zone is read in UTC, where no hour repeats."
    )


def skipped_hour_hint(missing: pd.DatetimeIndex, column: str, step: pd.Timedelta | None) -> str:
    """A sentence for a gap error whose ``missing`` periods (naive, on a grid ``step`` apart, under a day) are each a
    single early-morning period or hour of a day in a month of clock changes; "" otherwise (daily or coarser data
    skips no hour: a missing day, week or month at midnight is a plain gap)."""
    stamps = pd.DatetimeIndex(missing)
    if not _sub_daily(step) or stamps.tz is not None or not _at_a_change(stamps):
        return ""
    days = pd.Series(stamps.normalize())
    if (days.value_counts() > 4).any():  # more than an hour of quarter-hours missing in one night: not a change
        return ""
    return (
        f" The missing {'period falls' if len(stamps) == 1 else 'periods fall'} in the early morning of "
        f"{', '.join(str(d.date()) for d in days.drop_duplicates()[:3])}: local clock times without a zone skip an hour "
        f"when daylight-saving time starts. Give `{column}` its zone (e.g. df['{column}'] = "
        f"df['{column}'].dt.tz_localize('{ZONE}'); sub-daily data with a zone is read in UTC, where no hour is skipped), "
        "or pass fill_gaps=True to read the hour as missing."
    )


def _sub_daily(step: pd.Timedelta | None) -> bool:
    """Whether data spaced ``step`` apart has clock times a change can skip or repeat (a step under a day)."""
    return step is not None and pd.Timedelta(0) < step < pd.Timedelta(days=1)


def series_step(times: pd.Series, ids: pd.Series) -> pd.Timedelta | None:
    """The smallest positive spacing of distinct times within any one series (None with none): the data's step."""
    frame = pd.DataFrame({"id": ids.to_numpy(), "t": pd.DatetimeIndex(times).as_unit("ns")}).drop_duplicates()
    frame = frame.sort_values(["id", "t"], kind="stable")
    same = frame["id"].to_numpy()[1:] == frame["id"].to_numpy()[:-1]
    gaps = np.diff(frame["t"].to_numpy().astype("datetime64[ns]").astype(np.int64))[same]
    gaps = gaps[gaps > 0]
    return pd.Timedelta(int(gaps.min()), "ns") if len(gaps) else None


def missing_periods(stamps: pd.DatetimeIndex) -> pd.DatetimeIndex:
    """The periods missing from one series' sorted naive ``stamps`` on the grid of their most common step."""
    if len(stamps) < 3:
        return pd.DatetimeIndex([])
    stamps = stamps.as_unit("ns")
    steps = np.diff(stamps.asi8)
    values, counts = np.unique(steps, return_counts=True)
    step = int(values[np.argmax(counts)])
    if step <= 0:
        return pd.DatetimeIndex([])
    grid = pd.date_range(stamps[0], stamps[-1], freq=pd.Timedelta(step, "ns"))
    return grid.difference(stamps)
