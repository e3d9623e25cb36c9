"""Dates written as text, read one way only: ISO dates as they are, other text only where it cannot be misread.

Text such as "01/02/2019" reads as the 2nd of January month first and the 1st of February day first; pandas picks one
without a word (monthly data written day first then reads as consecutive days of January). Every reader of dates in
the package (the estimator's frames, study specs, the command line) goes through :func:`read_text_dates`, which
refuses such text, and each caller says in its own terms how to give the format.
"""

from __future__ import annotations

import contextlib
import contextvars

import numpy as np
import pandas as pd

from ..callers import silenced, warn_user

# A UTC offset written at the end of a timestamp: "Z", "+02:00", "-0530".
UTC_OFFSET = r"Z|[+-]\d{2}:?\d{2}"


class UnreadableDatesError(ValueError):
    """No common format reads the dates; ``example`` is the first value."""

    def __init__(self, example: object, reason: str):
        super().__init__(reason)
        self.example = example


class AmbiguousDatesError(ValueError):
    """The dates read differently day first and month first; ``example`` is the first value that does."""

    def __init__(self, example: object):
        super().__init__(f"{example!r} reads differently day first and month first")
        self.example = example


def read_text_dates(values: pd.Series, name: str = "The time column") -> pd.Series:
    """``values`` (text, or timestamp objects) as timestamps: ISO dates as they are; other text when it reads one way.

    Text that only one of day first and month first reads (13/04/2019) is read that way; text that both read alike
    (Apr 2019) as it reads. Text whose UTC offsets differ (local times written across a daylight-saving change) is
    read in UTC, with a warning naming ``name`` (:func:`in_utc_if_offsets_differ`).

    Raises:
        AmbiguousDatesError: some dates read differently day first and month first (03/04/2019).
        UnreadableDatesError: neither reading parses the values.
    """
    try:
        with silenced(FutureWarning):  # pandas 2 warns where the text holds several UTC offsets (read below)
            parsed = pd.to_datetime(values, format="ISO8601")
        if pd.api.types.is_datetime64_any_dtype(parsed):
            return parsed
    except (ValueError, TypeError):
        pass
    instants = in_utc_if_offsets_differ(values, name)
    if instants is not None:
        return instants
    readings, reason = {}, ""
    for dayfirst in (False, True):
        with silenced():  # pandas' format guess warns; the two readings are compared instead
            try:
                readings[dayfirst] = pd.to_datetime(values, dayfirst=dayfirst)
            except (ValueError, TypeError, OverflowError) as error:
                reason = reason or str(error)
                continue
    if not readings:
        raise UnreadableDatesError(values.iloc[0] if len(values) else None, reason)
    if len(readings) == 2 and not readings[False].equals(readings[True]):
        differs = (readings[False] != readings[True]).to_numpy()
        raise AmbiguousDatesError(values[differs].iloc[0])
    return next(iter(readings.values()))


def in_utc_if_offsets_differ(values: pd.Series, name: str, date_format: str | None = None) -> pd.Series | None:
    """Text timestamps that each end in a UTC offset, not all the same one (+01:00 and +02:00: local times written
    across a daylight-saving change), read with a warning naming ``name``; None for any other values.

    No one zone holds them as they are written (pandas gives objects, or refuses), while each is an exact instant. The
    local zone is not in the text (an offset is not a zone), so:

    - where every local time is at one time of day (midnight: daily, weekly, monthly data), they are the local dates
      they name, read without their offsets (in UTC, a week of Sundays at midnight alternates 23:00 and 22:00 and fits
      no calendar);
    - otherwise (hours, minutes) they are instants, read in UTC, and the forecasts are dated in UTC.
    """
    if not (pd.api.types.is_object_dtype(values) or pd.api.types.is_string_dtype(values)) or not len(values):
        return None
    offsets = values.astype(str).str.strip().str.extract(rf"({UTC_OFFSET})$")[0]
    if offsets.isna().any() or offsets.nunique() < 2:
        return None
    try:
        instants = pd.to_datetime(values, format=date_format or "ISO8601", utc=True)
    except (ValueError, TypeError):
        return None
    shift = pd.to_timedelta(
        offsets.str.replace("Z", "+00:00").str.replace(r"^([+-])(\d{2}):?(\d{2})$", r"\g<1>\2:\3:00", regex=True)
    )
    local = instants.dt.tz_localize(None) + shift.to_numpy()
    seen = ", ".join(sorted(offsets.unique())[:3])
    if (local - local.dt.normalize()).nunique() == 1:
        warn_user(
            f"{name} holds timestamps with {offsets.nunique()} UTC offsets ({seen}), as local dates written across a "
            "daylight-saving change (or in several zones) are: each is read as the local date and time it names, "
            "without its offset."
        )
        return local
    warn_user(
        f"{name} holds timestamps with {offsets.nunique()} UTC offsets ({seen}), as local times written across a "
        "daylight-saving change are: they are read as instants in UTC, and the forecasts are dated in UTC. To date them "
        "in the local zone, parse the column first: pd.to_datetime(values, utc=True).dt.tz_convert('Europe/Berlin') "
        "(with your zone)."
    )
    return instants


def numbers_as_text(values: pd.Series) -> pd.Series:
    """A numeric time column (years written as 1990, months as 199001) as the text its digits spell, for a date format.

    Whole floats (a column with a missing value reads as float) lose their ``.0``; other numbers keep their digits.
    """
    numbers = values.to_numpy()
    if values.dtype.kind == "f" and np.isfinite(numbers).all() and (numbers == np.round(numbers)).all():
        return pd.Series(numbers.astype(np.int64), index=values.index).astype(str)
    return values.astype(str)


def _same_rules(name: str, tz) -> bool:
    """Whether pandas reads ``name`` back as a zone with ``tz``'s offsets in January and July of a few years."""
    try:
        stamps = [pd.Timestamp(f"{year}-{month}-01 12:00") for year in (2001, 2015, 2030) for month in ("01", "07")]
        return all(stamp.tz_localize(name).utcoffset() == tz.utcoffset(stamp.to_pydatetime()) for stamp in stamps)
    except Exception:  # noqa: BLE001 - pandas raises several kinds for a name it does not know
        return False


def zone_name(tz, column: str) -> str:
    """A name of time zone ``tz`` that pandas reads back to the same rules: fitted models keep it as text.

    A name counts only where it reads back with the zone's own offsets (``'CET'`` names a zone with daylight saving,
    so a fixed +01:00 called CET is not kept as ``'CET'``): ``str(tz)`` for zoneinfo, pytz and ``'dateutil/...'``
    zones, ``'dateutil/<its file>'`` for a dateutil zone file, ``'+HH:MM'`` for a fixed offset (``pytz.FixedOffset``,
    ``datetime.timezone``, dateutil's ``tzutc``). ValueError, naming ``column``, for a zone with none of these.
    """
    text = str(tz)
    filename = str(getattr(tz, "_filename", "") or "")
    candidates = [text, "dateutil/" + filename.split("zoneinfo/", 1)[-1]] if filename else [text]
    for name in candidates:
        if _same_rules(name, tz):  # 'CET' for a fixed +01:00 named CET would read back with daylight saving
            return name
    winter, summer = (pd.Timestamp(f"2001-{month}-01").to_pydatetime() for month in ("01", "07"))
    offset = tz.utcoffset(winter)
    if offset is not None and offset == tz.utcoffset(summer):
        minutes = int(offset.total_seconds() // 60)
        return f"{'+' if minutes >= 0 else '-'}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
    raise ValueError(
        f"Column `{column}` is in time zone {text!r}, which cannot be named for pandas to read back; convert it to a "
        f"named zone first, e.g. df['{column}'] = df['{column}'].dt.tz_convert('Europe/London')."
    )


def restore_zone(times: pd.DatetimeIndex, tz_token: str | None) -> pd.DatetimeIndex:
    """Undo ``validation._to_naive_times`` on output timestamps: the times in the zone the user's data had.

    A wall time that occurs twice (midnight where clocks go back at midnight, as in America/Havana)
    is given its first occurrence: a day's date is what daily data means, and NaT would lose it.
    """
    if not tz_token:
        return times
    mode, tz = tz_token.split(":", 1)
    if mode == "wall":
        first = np.ones(len(times), dtype=bool)  # the first of two occurrences (the one still in daylight time)
        return times.tz_localize(tz, ambiguous=first, nonexistent="shift_forward")
    return times.tz_localize("UTC").tz_convert(tz)


# The zone token of the data a backtest's folds come from: their frames are naive (the whole frame validated once), so
# a fold's fit knows no zone, while its messages should name times as the user's data has them.
_MESSAGE_ZONE: contextvars.ContextVar[str | None] = contextvars.ContextVar("message_zone", default=None)


@contextlib.contextmanager
def messages_in_zone(tz_token: str | None):
    """Within the block, :func:`shown_time` names the times of zone-less fits in ``tz_token``'s zone."""
    token = _MESSAGE_ZONE.set(tz_token)
    try:
        yield
    finally:
        _MESSAGE_ZONE.reset(token)


def message_zone() -> str | None:
    """The zone token :func:`messages_in_zone` set for this block, if any."""
    return _MESSAGE_ZONE.get()


def shown_time(time: pd.Timestamp, tz_token: str | None) -> pd.Timestamp:
    """One time of a fit's frame (naive, or in UTC for sub-daily zoned data) as the user's data wrote it, for messages
    (``tz_token`` None: the zone of the backtest it runs in, if any: :func:`messages_in_zone`)."""
    return restore_zone(pd.DatetimeIndex([time]), tz_token or _MESSAGE_ZONE.get())[0]


def periods_message(dtype: pd.PeriodDtype, column: str) -> str:
    """What to do with a column of pandas periods: date each by the day the data means (a week's Sunday or Monday is
    the user's to choose, and pandas' ``to_timestamp()`` picks the Monday)."""
    start = f"df['{column}'] = df['{column}'].dt.to_timestamp(how='start')"
    if _sub_daily(dtype.freq):
        return f"Column `{column}` holds pandas periods ({dtype}), not timestamps. Date each period by its start: {start}."
    return (
        f"Column `{column}` holds pandas periods ({dtype}), not timestamps. Date each period by the day the data means: "
        f"{start} for its first day (months and quarters, as the package dates them), or "
        ".dt.to_timestamp(how='end').dt.normalize() for its last (weeks ending on Sunday for 'W-SUN'; how='start' "
        "would date them on the Monday)."
    )


def _sub_daily(offset: pd.DateOffset) -> bool:
    """Whether periods of ``offset`` are shorter than a day (hours, minutes); calendar ones (weeks, months) are not."""
    try:
        return pd.Timedelta(offset.nanos) < pd.Timedelta(days=1)
    except ValueError:  # a calendar offset has no fixed length
        return False
