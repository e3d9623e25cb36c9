"""Frequencies: inference, season lengths and the calendar grid."""

from __future__ import annotations

import numpy as np
import pandas as pd
from pandas.tseries.frequencies import to_offset
from pandas.tseries.offsets import Tick

from .clock_changes import missing_periods, skipped_hour_hint
from .dates import message_zone, shown_time
from .frames import shown_id

# Offset families by base name (the offset's name before any "-" anchor, e.g. "QS" of "QS-OCT").
# pandas >= 2.2 names the offsets "YE", "QE", "ME", "h", "min", "s"...; the older names ("A", "Q",
# "M", "H", "T", "S"...) are what pandas 2.0 and 2.1 give, so both are listed.
_YEARLY = frozenset({"YE", "YS", "BYE", "BYS", "Y", "A", "AS", "BY", "BA", "BAS"})
_QUARTERLY = frozenset({"QE", "QS", "BQE", "BQS", "Q", "BQ"})
_MONTHLY = frozenset({"ME", "MS", "BME", "BMS", "CBME", "CBMS", "M", "BM", "CBM"})
_SEMI_MONTHLY = frozenset({"SME", "SMS", "SM"})
_DAILY = frozenset({"D", "B", "C"})
_BUSINESS_HOURLY = frozenset({"bh", "cbh", "BH", "CBH"})

# Season length of each calendar frequency at n=1: the periods in the next calendar cycle up.
# Fixed periods shorter than a day (hours, minutes, seconds) are not listed: they take the daily
# cycle, computed from their length (see `season_length_for`).
_SEASON_BY_BASE = {
    **dict.fromkeys(_YEARLY, 1),  # no shorter cycle than the year
    **dict.fromkeys(_QUARTERLY, 4),  # a year
    **dict.fromkeys(_MONTHLY, 12),  # a year
    **dict.fromkeys(_SEMI_MONTHLY, 24),  # a year
    "W": 52,  # a year (52.18 weeks, rounded down)
    "D": 7,  # a week
    "B": 5,  # a business week
    "C": 5,  # a business week
}

_DAY_NANOS = 86_400 * 10**9
# Shortest period that takes the daily cycle: one minute, i.e. at most 1440 periods a day. A day of
# seconds is 86,400 periods, far longer than any encoder window (the default reads two seasons).
_MAX_PERIODS_PER_DAY = 1440


def normalise_freq(freq: str | pd.DateOffset) -> pd.DateOffset:
    """Turn a pandas offset alias into an offset, with a clear error for bad aliases and for offsets without one."""
    try:
        offset = to_offset(freq)
    except (ValueError, TypeError) as error:
        raise ValueError(f"`freq`={freq!r} is not a pandas offset alias such as 'D', 'MS' or 'h'.") from error
    try:
        offset.name  # seasons, calendars and priors are read off the alias  # noqa: B018
    except NotImplementedError as error:  # e.g. pd.DateOffset(months=1): a step with no alias
        raise ValueError(
            f"`freq`={freq!r} has no pandas offset alias; give one such as 'MS' (month start), 'ME' (month end), "
            "'D' or 'h' (for monthly dates within the month, date each month by its start and pass 'MS')."
        ) from error
    return offset


def _base_name(offset: pd.DateOffset) -> str:
    return offset.name.split("-")[0]


def _is_sub_daily_tick(offset: pd.DateOffset) -> bool:
    """A fixed-length period shorter than a day (hours, minutes, seconds and finer, any multiple)."""
    return isinstance(offset, Tick) and _base_name(offset) != "D" and 0 < abs(offset.nanos) < _DAY_NANOS


def _business_day_minutes(offset: pd.DateOffset) -> int:
    """Opening minutes per business day of a (custom) business-hour offset (480 for the default 09:00-17:00)."""
    total = 0
    for start, end in zip(offset.start, offset.end, strict=True):
        minutes = (end.hour * 60 + end.minute) - (start.hour * 60 + start.minute)
        total += minutes % 1440 or 1440  # an interval past midnight (22:00-06:00) wraps
    return total


def season_length_for(offset: pd.DateOffset) -> int:
    """Conventional season length of a frequency: the number of periods in one cycle of the calendar.

    The rule (GluonTS's and AutoGluon's for hours, minutes and multiples; this package's own for
    weekly data, which gets the yearly cycle, and for business hours):

    - Calendar frequencies take the next cycle up: yearly 1 (no shorter cycle), quarterly 4,
      monthly 12, semi-monthly 24 and weekly 52 (a year), daily 7 (a week), business and
      custom-business daily 5 (a business week), business hourly 8 (the periods in the
      business day: 8 for the default 09:00-17:00 opening hours).
    - Fixed periods shorter than a day (hours, minutes and seconds, any multiple) take the daily
      cycle: the number of periods in a day, by the period's length, so that equal lengths get
      equal seasons whatever the alias ('h' and '60min': 24; '30min': 48; '15min': 96; 'min' and
      '60s': 1440; '24h', like 'D', 7; '7D' and '168h', like 'W', 52). Periods under a minute get 1: a day of seconds is 86,400
      periods, far longer than any encoder window; pass ``season_length`` for such data.
    - A multiple ``n`` of a frequency spans the same cycle in ``n`` times fewer periods:
      season('2h') = season('h') / 2 = 12, season('2W') = 26, season('3MS') = 4. When ``n`` does
      not divide the season (or a day is not a whole number of periods: '7min', '5h', '2D'), no
      whole number of periods spans the cycle and the season is 1.

    Unknown frequencies (e.g. week-of-month) get 1.
    """
    n = abs(offset.n) or 1
    base = _base_name(offset)
    if base in _BUSINESS_HOURLY:
        season, rest = divmod(_business_day_minutes(offset), 60 * n)
        return int(season) if rest == 0 and season >= 1 else 1
    if base == "D" and n % 7 == 0:  # whole weeks of days ('7D'): the yearly cycle, as for 'W'
        base, n = "W", n // 7
    if base in _SEASON_BY_BASE:
        season, rest = divmod(_SEASON_BY_BASE[base], n)
        return int(season) if rest == 0 else 1
    if isinstance(offset, Tick) and offset.nanos:
        return _fixed_period_season(abs(offset.nanos))
    return 1


def _fixed_period_season(nanos: int) -> int:
    """Season of a fixed-length period, by its length alone (so '60min' is 'h' and '24h' is 'D')."""
    if nanos % (7 * _DAY_NANOS) == 0:  # whole weeks ('7D', '168h'): the yearly cycle, as for 'W'
        weeks = nanos // (7 * _DAY_NANOS)
        return int(_SEASON_BY_BASE["W"] // weeks) if _SEASON_BY_BASE["W"] % weeks == 0 else 1
    if nanos % _DAY_NANOS == 0:  # whole days: the weekly cycle, as for 'D'
        days = nanos // _DAY_NANOS
        return int(_SEASON_BY_BASE["D"] // days) if _SEASON_BY_BASE["D"] % days == 0 else 1
    # Shorter than a day: the daily cycle, for periods of a minute or more that divide the day.
    per_day, rest = divmod(_DAY_NANOS, nanos)
    return int(per_day) if rest == 0 and 1 <= per_day <= _MAX_PERIODS_PER_DAY else 1


def seasons_for(offset: pd.DateOffset, season_length: int | None = None) -> tuple[int, ...]:
    """The seasonal cycles of a frequency for a multi-seasonal decomposition (MSTL), shortest first.

    The conventional season (:func:`season_length_for`, or ``season_length`` where given) and, where the calendar has
    one, the next cycle up: daily data the week and the year (7, 365), business days (5, 260), hours and finer the
    day and the week (24 and 168 for hourly data, 48 and 336 for half-hours). Weekly to quarterly data have their
    one yearly season; yearly data, and a frequency without a season, none.
    """
    season = int(season_length or season_length_for(offset))
    if season <= 1:
        return ()
    base = _base_name(offset)
    if base in ("D", "B", "C") and abs(offset.n) == 1:
        return (season, 365 if base == "D" else 260) if season < (365 if base == "D" else 260) else (season,)
    daily = isinstance(offset, Tick) and offset.nanos and abs(offset.nanos) < _DAY_NANOS
    if (daily and season == season_length_for(offset)) or base in _BUSINESS_HOURLY:
        return (season, 7 * season if base not in _BUSINESS_HOURLY else 5 * season)
    return (season,)


def periods_per_week(offset: pd.DateOffset, season_length: int) -> int:
    """Periods in a week of data finer than a day whose season is the day (:func:`season_length_for`); else 0."""
    sub_daily = isinstance(offset, Tick) and offset.nanos and abs(offset.nanos) < _DAY_NANOS
    return 7 * season_length if sub_daily and season_length > 1 and season_length == season_length_for(offset) else 0


def season_spans_a_year(offset: pd.DateOffset, season_length: int) -> bool:
    """Whether ``season_length`` periods of ``offset`` cover about a year or more (yearly to weekly data).

    Measured from a date on the offset's own calendar, so that every anchor of a frequency answers alike (a fiscal
    year ending in June, quarters ending in November: counted from 1 January, a year ending in June is half a year).
    """
    start = offset.rollforward(pd.Timestamp("2001-01-01"))
    return (start + season_length * offset) - start >= pd.Timedelta(days=350)


def infer_offset(times: pd.Series, ids: pd.Series) -> pd.DateOffset:
    """Infer one frequency for the whole panel from the series' own timestamps (``times``, named as the user's column).

    Raises:
        ValueError: the frequency cannot be determined, or series disagree (mixed frequency).
    """
    found: dict[str, object] = {}
    frame = pd.DataFrame({"id": ids.to_numpy(), "ds": times.to_numpy()})
    sizes = frame.groupby("id", sort=False).size()
    candidates = sizes[sizes >= 3].sort_values(ascending=False).index[:50]
    grouped = frame[frame["id"].isin(candidates)].groupby("id", sort=False)["ds"]
    for series_id, ds in grouped:
        alias = pd.infer_freq(pd.DatetimeIndex(ds.to_numpy()))
        if alias is None:
            continue
        found.setdefault(alias, series_id)
    column = times.name if isinstance(times.name, str) else "ds"
    if not found:
        raise ValueError(_not_inferred(grouped if len(candidates) else None, column))
    if len(found) > 1:
        detail = ", ".join(f"series {shown_id(sid)} looks {alias!r}" for alias, sid in list(found.items())[:3])
        raise ValueError(
            f"Mixed frequencies in `{column}`: {detail}. Every series must lie on one grid: put their dates on one "
            "(weekly series all on the same weekday, e.g. dates moved with pd.offsets.Week(weekday=...)), pass `freq` "
            "where the others are that grid with gaps, or forecast the groups as separate panels."
        )
    return normalise_freq(next(iter(found)))


def _not_inferred(grouped, column: str) -> str:
    """Why no frequency was inferred: too few timestamps per series, or no spacing pandas can name."""
    if grouped is None:
        return (
            f"Could not infer the frequency of `{column}`: no series has 3 timestamps; pass `freq`, e.g. freq='MS' for "
            "monthly data."
        )
    series_id, ds = next(iter(grouped))
    stamps = pd.DatetimeIndex(ds.to_numpy()).sort_values()
    # In the data's own zone where a fit or backtest set it (``dates.messages_in_zone``): zoned sub-daily times are UTC here.
    shown = ", ".join(str(t.date()) if t == t.normalize() else str(shown_time(t, None)) for t in stamps[:3])
    message = (
        f"Could not infer the frequency of `{column}`: no series is spaced as pandas can name (gaps or irregular dates; "
        f"series {shown_id(series_id)}: {shown}, ...). Pass `freq`, e.g. freq='D' or 'MS' (with `fill_gaps=True` where "
        "periods are missing)."
    )
    if message_zone() is None and len(stamps) > 2:  # naive sub-daily clock times across a change
        message += skipped_hour_hint(missing_periods(stamps), column, (stamps[1:] - stamps[:-1]).min())
    months = stamps.to_period("M").asi8
    if (stamps.day == stamps.day[0]).all() and stamps.day[0] > 1 and (np.diff(months) >= 1).all():
        message += (
            f" Monthly dates on day {stamps.day[0]} have no pandas alias: date each month by its start "
            f"(`df['{column}'] = df['{column}'].dt.to_period('M').dt.to_timestamp()`) and pass freq='MS'."
        )
    return message


def build_grid(first: pd.Timestamp, last: pd.Timestamp, offset: pd.DateOffset, before: int, after: int) -> pd.DatetimeIndex:
    """A regular calendar from `before` periods ahead of `first` to `after` periods past `last`."""
    start = first - before * offset if before else first
    end = last + after * offset if after else last
    return pd.date_range(start=start, end=end, freq=offset)


def calendar_features(grid: pd.DatetimeIndex, offset: pd.DateOffset) -> np.ndarray:
    """Smooth calendar features of each grid timestamp, (G, C) float32.

    Seasonal positions are encoded as sine/cosine pairs so that December sits next
    to January. Which cycles are used depends on the frequency.
    """
    base = _base_name(offset)
    cycles: list[tuple[np.ndarray, float]] = []
    if base in _MONTHLY or base in _SEMI_MONTHLY:
        cycles.append((grid.month.to_numpy() - 1, 12.0))
    elif base in _QUARTERLY:
        cycles.append(((grid.month.to_numpy() - 1) // 3, 4.0))
    elif base == "W":
        cycles.append((grid.isocalendar().week.to_numpy().astype(float) - 1, 52.18))
    elif base in _DAILY:
        cycles.append((grid.dayofweek.to_numpy(), 7.0))
        cycles.append((grid.dayofyear.to_numpy() - 1, 365.25))
    elif base in _BUSINESS_HOURLY or _is_sub_daily_tick(offset):
        minutes = grid.hour.to_numpy() * 60 + grid.minute.to_numpy()
        cycles.append((minutes, 1440.0))
        cycles.append((grid.dayofweek.to_numpy(), 7.0))
    if not cycles:
        return np.zeros((len(grid), 0), dtype=np.float32)
    columns = []
    for position, period in cycles:
        angle = 2.0 * np.pi * np.asarray(position, dtype=np.float64) / period
        columns += [np.sin(angle), np.cos(angle)]
    return np.stack(columns, axis=1).astype(np.float32)
