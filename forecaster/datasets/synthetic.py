"""Synthetic daily retail and hourly demand panels with future-known calendars and a known structure."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._base import DatasetInfo, _check_size, us_holiday_flag


def _promotions(rng: np.random.Generator, shape: tuple[int, int], share: float, days: int = 5) -> np.ndarray:
    """0/1 promotion runs of ``days`` consecutive periods, covering about ``share`` of the periods."""
    starts = rng.random(shape) < share / days
    promo = np.zeros(shape, dtype=bool)
    for lag in range(days):
        promo[:, lag:] |= starts[:, : shape[1] - lag]
    return promo.astype(np.float64)


def _ar1(rng: np.random.Generator, shape: tuple[int, int], phi: float, scale: float) -> np.ndarray:
    """Rows of an AR(1) process x_t = phi x_(t-1) + e_t, e_t ~ N(0, scale), starting at 0."""
    shocks, out = rng.normal(0.0, scale, shape), np.zeros(shape)
    for t in range(1, shape[1]):
        out[:, t] = phi * out[:, t - 1] + shocks[:, t]
    return out


def _long_frame(prefix: str, ds: pd.DatetimeIndex, columns: dict[str, np.ndarray]) -> pd.DataFrame:
    n_series, length = columns["y"].shape
    ids = np.array([f"{prefix}{i:03d}" for i in range(n_series)])
    frame = {"unique_id": np.repeat(ids, length), "ds": np.tile(ds.to_numpy(), n_series)}
    return pd.DataFrame(frame | {name: np.asarray(values, dtype=np.float64).ravel() for name, values in columns.items()})


def make_daily_retail(
    n_series: int = 300,
    length: int = 730,
    seed: int = 0,
    start: str = "2021-01-01",
    promo_share: float = 0.1,
    intermittent_share: float = 0.1,
    sunday_closed_share: float = 0.2,
    zero_share: float = 0.02,
) -> tuple[pd.DataFrame, DatasetInfo]:
    """Daily unit sales per store and product: non-negative counts with weekly and yearly cycles and known calendars.

    y ~ negative binomial (a gamma-Poisson mixture, dispersion 2 to 10 per series) around level x weekly cycle x
    yearly cycle x promotion lift (+30% to +120%) x holiday effect (x0.6 to x1.6 per series) x ``open``.
    Future-known 0/1 columns: ``promo`` (runs of 5 days, about ``promo_share`` of days), ``holiday`` (US federal
    holidays) and ``open`` (0 on 25 December for every series, and on Sundays and 1 January for a
    ``sunday_closed_share`` of series; y is 0 whenever ``open`` is 0). Besides closed days, ``zero_share`` of open
    days sell nothing (a stock-out, not known ahead), and ``intermittent_share`` of series sell about 0.3 units a
    day (mostly zeros). Deterministic per ``seed``.
    """
    _check_size(n_series, length)
    rng = np.random.default_rng(seed)
    ds = pd.date_range(start, periods=length, freq="D")
    dow, doy = ds.dayofweek.to_numpy()[None, :], ds.dayofyear.to_numpy()[None, :]
    intermittent = rng.random((n_series, 1)) < intermittent_share
    level = np.where(intermittent, np.exp(rng.normal(-1.2, 0.3, (n_series, 1))), np.exp(rng.normal(2.5, 0.9, (n_series, 1))))
    weekly = np.exp(rng.uniform(0.1, 0.5, (n_series, 1)) * np.cos(2 * np.pi * (dow - rng.integers(0, 7, (n_series, 1))) / 7))
    yearly = np.exp(
        rng.uniform(0.05, 0.4, (n_series, 1)) * np.sin(2 * np.pi * doy / 365.25 + rng.uniform(0, 2 * np.pi, (n_series, 1)))
    )
    promo = _promotions(rng, (n_series, length), promo_share)
    holiday = np.broadcast_to(us_holiday_flag(ds)[None, :], (n_series, length))
    lift = np.exp(np.log(rng.uniform(1.3, 2.2, (n_series, 1))) * promo + np.log(rng.uniform(0.6, 1.6, (n_series, 1))) * holiday)
    christmas = (ds.month == 12) & (ds.day == 25)
    sunday_closed = rng.random((n_series, 1)) < sunday_closed_share
    closed = christmas[None, :] | (sunday_closed & ((dow == 6) | ((ds.month == 1) & (ds.day == 1))[None, :]))
    open_ = (~closed).astype(np.float64)
    mean = level * weekly * yearly * lift * open_
    dispersion = rng.uniform(2.0, 10.0, (n_series, 1))
    y = rng.poisson(mean * rng.gamma(dispersion, 1.0 / dispersion, (n_series, length))).astype(np.float64)
    y[rng.random((n_series, length)) < zero_share] = 0.0
    df = _long_frame("R", ds, {"y": y, "promo": promo, "holiday": holiday, "open": open_})
    info = DatasetInfo(
        name="daily_retail",
        freq="D",
        season_length=7,
        horizon=14,
        n_series=n_series,
        future_covariates=("promo", "holiday", "open"),
        timestamps="synthetic",
        source=f"forecaster.datasets.make_daily_retail(seed={seed})",
        notes=(
            f"{int(intermittent.sum())} intermittent series (about 0.3 units a day); "
            f"{int(sunday_closed.sum())} series closed on Sundays and 1 January; every series closed on 25 December.",
        ),
    )
    return df, info


def make_hourly_demand(
    n_series: int = 200,
    length: int = 24 * 7 * 12,
    seed: int = 0,
    start: str = "2023-01-02",
    n_regions: int = 5,
    noise: float = 0.05,
) -> tuple[pd.DataFrame, DatasetInfo]:
    """Hourly energy demand of sites in a few regions: daily and weekly cycles, temperature and holidays known ahead.

    Each site belongs to one of ``n_regions`` regions whose ``temperature`` (degrees C) is a winter level plus a
    daily cycle (warmest at 15:00) plus a slow AR(1) weather swing. Demand = level x daily profile (morning and
    evening peaks) x weekly profile (weekends at 55% to 95% of weekdays) x holiday effect (a holiday looks like a
    Sunday) x (1 + heating sensitivity x degrees below 18 C) x lognormal noise (``noise``): positive throughout.
    ``temperature`` and ``holiday`` (US federal holidays, 0/1 on every hour of the day) are future-known (a weather
    forecast stands in for the temperature). Default: 200 sites x 12 weeks from Monday 2023-01-02 (holidays on
    16 January and 20 February). Deterministic per ``seed``.
    """
    _check_size(n_series, length)
    rng = np.random.default_rng(seed)
    ds = pd.date_range(start, periods=length, freq="h")
    hour, dow = ds.hour.to_numpy()[None, :], ds.dayofweek.to_numpy()[None, :]
    swing = _ar1(rng, (n_regions, length), 0.995, 0.25)
    regional = rng.uniform(0.0, 10.0, (n_regions, 1)) + 4.0 * np.cos(2 * np.pi * (hour - 15) / 24) + swing
    temperature = regional[rng.integers(0, n_regions, n_series)]
    holiday = np.broadcast_to(us_holiday_flag(ds)[None, :], (n_series, length))
    level = np.exp(rng.normal(4.0, 0.8, (n_series, 1)))
    morning, evening = rng.uniform(0.2, 0.6, (n_series, 1)), rng.uniform(0.3, 0.8, (n_series, 1))
    daily = 0.5 + morning * np.exp(-((hour - 8) ** 2) / 4.0) + evening * np.exp(-((hour - 19) ** 2) / 6.0)
    daily = daily + 0.3 * ((hour >= 7) & (hour <= 20))
    weekend = rng.uniform(0.55, 0.95, (n_series, 1))
    off_day = (dow >= 5) | (holiday == 1)
    weekly = np.where(off_day, weekend, 1.0)
    heating = 1.0 + rng.uniform(0.01, 0.06, (n_series, 1)) * np.clip(18.0 - temperature, 0.0, None)
    y = level * daily * weekly * heating * np.exp(noise * rng.standard_normal((n_series, length)))
    df = _long_frame("H", ds, {"y": y, "temperature": temperature, "holiday": holiday})
    info = DatasetInfo(
        name="hourly_demand",
        freq="h",
        season_length=24,
        horizon=24,
        n_series=n_series,
        future_covariates=("temperature", "holiday"),
        timestamps="synthetic",
        source=f"forecaster.datasets.make_hourly_demand(seed={seed})",
        notes=("Weekly season 168; a holiday follows the weekend profile.",),
    )
    return df, info
