"""statsforecast baselines (SeasonalNaive, AutoETS) fitted on exactly the data the model sees."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

BASELINES = ("seasonal_naive", "auto_ets")


def run_baselines(
    train: pd.DataFrame,
    horizon: int,
    freq: str,
    season_length: int,
    names: tuple[str, ...],
    level: int | None = 80,
    n_jobs: int = 1,
    id_col: str = "unique_id",
    time_col: str = "ds",
    target_col: str = "y",
) -> pd.DataFrame:
    """Forecast every series of ``train`` with the named baselines.

    statsforecast needs complete series, so missing targets are filled forward (then
    backward) per series for the baselines only. Returns ``id_col``, ``ds`` and one
    column per baseline, plus ``<name>_lo`` / ``<name>_hi`` for a ``level``% interval.
    """
    from statsforecast import StatsForecast
    from statsforecast.models import AutoETS, SeasonalNaive

    unknown = [n for n in names if n not in BASELINES]
    if unknown:
        raise ValueError(f"Unknown baseline(s) {unknown}; choose from {BASELINES}.")
    if not names:
        return pd.DataFrame(columns=[id_col, time_col])
    makers = {
        "seasonal_naive": lambda: SeasonalNaive(season_length=season_length, alias="seasonal_naive"),
        "auto_ets": lambda: AutoETS(season_length=season_length, alias="auto_ets"),
    }
    data = train[[id_col, time_col, target_col]].rename(columns={id_col: "unique_id", time_col: "ds", target_col: "y"})
    data = data.assign(y=data.groupby("unique_id", sort=False)["y"].ffill())
    data = data.assign(y=data.groupby("unique_id", sort=False)["y"].bfill())
    engine = StatsForecast(models=[makers[n]() for n in names], freq=freq, n_jobs=n_jobs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = engine.forecast(df=data, h=horizon, level=[level] if level else None)
    out = out.reset_index() if "unique_id" not in out.columns else out
    renames = {"unique_id": id_col, "ds": time_col}
    for n in names:
        renames[f"{n}-lo-{level}"] = f"{n}_lo"
        renames[f"{n}-hi-{level}"] = f"{n}_hi"
    out = out.rename(columns=renames)
    for n in names:
        if not np.isfinite(out[n].to_numpy(dtype=float)).all():
            raise FloatingPointError(f"Baseline `{n}` produced non-finite forecasts.")
    return out
