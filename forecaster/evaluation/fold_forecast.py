"""One refitted fold of a backtest: fit a fresh clone on the fold's data and forecast from its cutoffs.

A function of its arguments only (the template, the fold's rows, its future-known covariates), so that it runs
the same in the backtest's own process or as a task on a Dask worker (``backtest`` spreads independent folds
over an active client's workers: ``forecaster.scale.dispatch.fold_client``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.base import clone

from ..data.panel import Panel
from ..estimator import Seq2SeqForecaster
from ..model.inference import Forecast
from .splits import Fold


@dataclass
class FoldForecast:
    """The fold's fitted model, its panel, the forecast from each series' cutoff, and the seconds each took."""

    fitted: Seq2SeqForecaster
    panel: Panel
    forecast: Forecast
    fit_seconds: float
    predict_seconds: float


def fit_and_forecast(template: Seq2SeqForecaster, train: pd.DataFrame, future: pd.DataFrame | None, fold: Fold) -> FoldForecast:
    """A clone of ``template`` fitted on ``train`` and its forecast from every series' cutoff in ``fold``."""
    tick = time.perf_counter()
    fitted = clone(template)
    panel = fitted._fit_frame(train, None)
    fit_seconds = time.perf_counter() - tick
    tick = time.perf_counter()
    panel = fitted._with_future(panel, future)
    rows = np.arange(len(panel.ids))
    check_origins(panel, rows, np.full(len(rows), panel.last_col), fold)
    forecast = fitted._forecast(panel, rows, np.full(len(rows), panel.last_col))
    return FoldForecast(fitted, panel, forecast, fit_seconds, time.perf_counter() - tick)


def check_origins(panel: Panel, series: np.ndarray, origins: np.ndarray, fold: Fold) -> None:
    """Every window's origin is its series' cutoff in ``fold``, or a clear error (a series without a row at its cutoff)."""
    stamps = pd.DatetimeIndex(panel.timestamps(series, origins))
    expected = pd.DatetimeIndex(fold.cutoffs.reindex(panel.ids[series]).to_numpy())
    wrong = np.flatnonzero(stamps != expected)
    if len(wrong):
        uid = panel.ids[series[wrong[0]]]
        raise ValueError(
            f"Fold {fold.index}: series {uid!r} has no row at its cutoff {expected[wrong[0]]} (its last row before it is "
            f"{stamps[wrong[0]]}); with fill_gaps=True add that row with a missing target, so the fold forecasts from its cutoff."
        )
