"""Sub-daily real series: a bank's 5-minute call counts (fpp3) and half-hourly demand of England and Wales (forecast)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._base import DatasetInfo, _rdataset, us_holiday_flag

_CALENDARS = ("grid", "business")
BANK_SLOTS_PER_DAY = 169  # 07:00 to 21:00 inclusive, every 5 minutes


def load_bank_calls(calendar: str = "grid") -> tuple[pd.DataFrame, DatasetInfo]:
    """Calls handled per 5 minutes by a North American bank's call centre, 2003-03-03 to 2003-10-24 (fpp3 ``bank_calls``).

    The source holds only opening hours: weekdays, 169 five-minute slots from 07:00 to 21:00. Six weekdays are
    absent: three US federal holidays (26 May, 4 July, 1 September: closed) and 4 April, 7 April and 14 October,
    which are no holidays (the centre opened on Columbus Day, 13 October): their counts are unknown. ``calendar``
    says how that becomes a regular series:

    - ``"grid"`` (default): every 5 minutes of every day from 2003-03-03 00:00 to 2003-10-24 23:55 (236 days x 288
      = 67,968 rows, real timestamps). ``open`` (future-known: opening hours are published) is 1 from 07:00 to
      21:00 on weekdays other than the three holidays, and 0 elsewhere, where ``y`` is 0 (no calls are handled
      while closed). The open slots of the three unknown days have ``y`` NaN (507 rows). Season 288 (a day),
      horizon 288: the next calendar day, which holds one business day when it is a working day.
    - ``"business"``: the open slots only (27,716 counted + 507 NaN), on consecutive 5-minute timestamps from
      2003-03-03 07:00 (``timestamps="synthetic"``: only the first day's clock is real). Season and horizon 169,
      one business day; no covariates.
    """
    if calendar not in _CALENDARS:
        raise ValueError(f"`calendar` must be one of {_CALENDARS}; got {calendar!r}.")
    raw, source = _rdataset("fpp3", "bank_calls")
    stamps = pd.DatetimeIndex(pd.to_datetime(raw["DateTime"])).tz_localize(None)
    ds = pd.date_range(stamps[0].normalize(), stamps[-1].normalize() + pd.Timedelta("23h55min"), freq="5min")
    days, minutes = ds.normalize(), ds.hour * 60 + ds.minute
    closed_days = days.isin(days[us_holiday_flag(days) == 1].difference(stamps.normalize()))
    open_ = (ds.dayofweek < 5) & (minutes >= 7 * 60) & (minutes <= 21 * 60) & ~closed_days
    y = pd.Series(raw["Calls"].to_numpy(dtype=np.float64), index=stamps).reindex(ds).to_numpy()
    y[~open_] = 0.0
    df = pd.DataFrame({"unique_id": "bank", "ds": ds, "y": y, "open": open_.astype(np.float64)})
    notes = ["4 April, 7 April and 14 October 2003 are missing from the source: NaN on their open slots."]
    if calendar == "business":
        df = df.loc[open_, ["unique_id", "y"]].reset_index(drop=True)
        df.insert(1, "ds", pd.date_range(stamps[0], periods=len(df), freq="5min"))
        season, covariates, timestamps = BANK_SLOTS_PER_DAY, (), "synthetic"
        notes.append("Open slots only, on a consecutive 5-minute clock from the first opening (synthetic timestamps).")
    else:
        season, covariates, timestamps = 288, ("open",), "real"
        notes.append("Closed slots (nights, weekends, three federal holidays) are rows with open = 0 and y = 0.")
    info = DatasetInfo(
        name=f"bank_calls_{calendar}",
        freq="5min",
        season_length=season,
        horizon=season,
        n_series=1,
        future_covariates=covariates,
        timestamps=timestamps,
        source=source,
        notes=tuple(notes),
    )
    return df, info


def load_taylor() -> tuple[pd.DataFrame, DatasetInfo]:
    """Half-hourly electricity demand of England and Wales (MW), 12 weeks from Monday 2000-06-05 00:00 (forecast ``taylor``).

    The R object is a ``msts`` (seasons 48 and 336) without dates; the timestamps are rebuilt from the documented
    start, 4,032 half-hours to 2000-08-27 23:30, all within British Summer Time (no clock change). No covariates.
    """
    raw, source = _rdataset("forecast", "taylor")
    ds = pd.date_range("2000-06-05", periods=len(raw), freq="30min")
    df = pd.DataFrame({"unique_id": "england_wales", "ds": ds, "y": raw["x"].to_numpy(dtype=np.float64)})
    info = DatasetInfo(
        name="taylor",
        freq="30min",
        season_length=48,
        horizon=48,
        n_series=1,
        source=source,
        notes=("Timestamps rebuilt from the documented start (2000-06-05, a Monday); weekly season 336.",),
    )
    return df, info
