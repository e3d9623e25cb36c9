"""Frequencies: inference, season lengths and the calendar grid."""

from __future__ import annotations

import numpy as np
import pandas as pd
from pandas.tseries.frequencies import to_offset

# Season length by the offset's base name, for the frequencies users meet most.
_SEASON_BY_BASE = {
    "Y": 1,
    "YS": 1,
    "A": 1,
    "AS": 1,
    "BY": 1,
    "BYS": 1,
    "Q": 4,
    "QS": 4,
    "QE": 4,
    "BQ": 4,
    "BQS": 4,
    "M": 12,
    "MS": 12,
    "ME": 12,
    "BM": 12,
    "BMS": 12,
    "BME": 12,
    "SM": 24,
    "SMS": 24,
    "W": 52,
    "D": 7,
    "B": 5,
    "C": 5,
    "h": 24,
    "H": 24,
    "bh": 8,
    "BH": 8,
    "min": 60,
    "T": 60,
    "s": 60,
    "S": 60,
}


def normalise_freq(freq: str | pd.DateOffset) -> pd.DateOffset:
    """Turn a pandas offset alias into an offset, with a clear error for bad aliases."""
    try:
        return to_offset(freq)
    except (ValueError, TypeError) as error:
        raise ValueError(f"`freq`={freq!r} is not a pandas offset alias such as 'D', 'MS' or 'h'.") from error


def season_length_for(offset: pd.DateOffset) -> int:
    """Conventional season length of a frequency (12 for monthly, 4 quarterly, 7 daily...)."""
    base = offset.name.split("-")[0]
    season = _SEASON_BY_BASE.get(base, 1)
    if offset.n > 1 and base in {"h", "H", "min", "T", "s", "S"}:
        minutes = {"h": 60, "H": 60}.get(base, 1)
        per_day = (24 * 60) // max(1, offset.n * minutes) if base in {"h", "H", "min", "T"} else season
        return int(max(1, per_day))
    if offset.n > 1:
        return int(max(1, season // offset.n))
    return int(season)


def season_spans_a_year(offset: pd.DateOffset, season_length: int) -> bool:
    """Whether ``season_length`` periods of ``offset`` cover about a year or more (yearly to weekly data)."""
    start = pd.Timestamp("2001-01-01")
    return (start + season_length * offset) - start >= pd.Timedelta(days=350)


def infer_offset(times: pd.Series, ids: pd.Series) -> pd.DateOffset:
    """Infer one frequency for the whole panel from the series' own timestamps.

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
    if not found:
        raise ValueError(
            "Could not infer the frequency of `ds` (too few regular timestamps); pass `freq`, e.g. freq='MS' for monthly data."
        )
    if len(found) > 1:
        detail = ", ".join(f"series {sid!r} looks {alias!r}" for alias, sid in list(found.items())[:3])
        raise ValueError(f"Mixed frequencies in `ds`: {detail}. Pass `freq` or split the panel.")
    return normalise_freq(next(iter(found)))


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
    base = offset.name.split("-")[0]
    cycles: list[tuple[np.ndarray, float]] = []
    if base in {"M", "MS", "ME", "BM", "BMS", "BME", "SM", "SMS"}:
        cycles.append((grid.month.to_numpy() - 1, 12.0))
    elif base in {"Q", "QS", "QE", "BQ", "BQS"}:
        cycles.append(((grid.month.to_numpy() - 1) // 3, 4.0))
    elif base == "W":
        cycles.append((grid.isocalendar().week.to_numpy().astype(float) - 1, 52.18))
    elif base in {"D", "B", "C"}:
        cycles.append((grid.dayofweek.to_numpy(), 7.0))
        cycles.append((grid.dayofyear.to_numpy() - 1, 365.25))
    elif base in {"h", "H", "min", "T", "s", "S", "bh", "BH"}:
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
