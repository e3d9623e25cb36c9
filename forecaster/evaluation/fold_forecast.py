"""One fold of a backtest: its data (rows up to the cutoff, future-known covariates of its horizon), the guard
that refuses anything past the cutoff, and a refitted fold's fit and forecast.

``fit_and_forecast`` is a function of its arguments only (the template, the fold's rows, its future-known
covariates), so that it runs the same in the backtest's own process or as a task on a Dask worker
(``submit_folds``: ``backtest`` spreads independent folds over an active client's workers).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.base import clone

from ..data.panel import Panel
from ..data.roles import CovariateRoles, LeakageError
from ..data.validation import Columns
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


def fit_and_forecast(
    template: Seq2SeqForecaster, train: pd.DataFrame, future: pd.DataFrame | None, fold: Fold, account: bool = False
) -> FoldForecast:
    """A clone of ``template`` fitted on ``train``, forecast from every series' cutoff in ``fold`` (``account``: with it)."""
    tick = time.perf_counter()
    fitted = clone(template)
    panel = fitted._fit_frame(train, None)
    fit_seconds = time.perf_counter() - tick
    tick = time.perf_counter()
    panel = fitted._with_future(panel, future)
    rows = np.arange(len(panel.ids))
    check_origins(panel, rows, np.full(len(rows), panel.last_col), fold)
    forecast = fitted._forecast(panel, rows, np.full(len(rows), panel.last_col))
    predict_seconds = time.perf_counter() - tick
    if account and forecast.account is None and fitted._accountable():  # the report's shares: not part of the forecast
        forecast = fitted._forecast(panel, rows, np.full(len(rows), panel.last_col), account=True)
    return FoldForecast(fitted, panel, forecast, fit_seconds, predict_seconds)


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


def fold_data(
    frame: pd.DataFrame, fold: Fold, columns: Columns, roles: CovariateRoles
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The fold's training rows (``ds <= cutoff``) and its future-known covariates for the horizon."""
    part = frame[frame[columns.id].isin(fold.cutoffs.index)]
    ids, times = part[columns.id], part[columns.time]
    cut = ids.map(fold.cutoffs)
    in_train = times <= cut
    if fold.history_starts is not None:
        in_train &= times >= ids.map(fold.history_starts)
    train = part.loc[in_train.to_numpy()]
    if not roles.future:
        return train, None
    in_horizon = (times > cut) & (times <= ids.map(fold.horizon_ends))
    return train, part.loc[in_horizon.to_numpy(), [columns.id, columns.time, *roles.future]]


def guard_fold(train: pd.DataFrame, future: pd.DataFrame | None, fold: Fold, columns: Columns, roles: CovariateRoles) -> None:
    """Refuse a fold whose training data or future frame reaches past its cutoff.

    Raises:
        LeakageError: a training row is dated after its series' cutoff, or the future
            frame carries the target, a past covariate, or a row outside the horizon.
    """
    late = train[columns.time].to_numpy() > train[columns.id].map(fold.cutoffs).to_numpy()
    if late.any():
        row = train.loc[late].iloc[0]
        raise LeakageError(
            f"Fold {fold.index}: series {row[columns.id]!r} has training data at {row[columns.time]}, after its cutoff."
        )
    if future is None:
        return
    leaked = [c for c in (columns.target, *roles.past) if c in future.columns]
    if leaked:
        raise LeakageError(f"Fold {fold.index}: the future frame carries {leaked}.")
    cut = future[columns.id].map(fold.cutoffs).to_numpy()
    end = future[columns.id].map(fold.horizon_ends).to_numpy()
    times = future[columns.time].to_numpy()
    if ((times <= cut) | (times > end)).any():
        raise LeakageError(f"Fold {fold.index}: the future frame has rows outside the fold's horizon.")


def submit_folds(client, template, frame, folds, columns, roles) -> list:
    """Every fold's fit and forecast as a task on ``client``'s workers, all submitted at once (none without a client)."""
    if client is None:
        return []
    jobs = []
    for fold in folds:
        train, future = fold_data(frame, fold, columns, roles)
        guard_fold(train, future, fold, columns, roles)
        jobs.append(client.submit(fit_and_forecast, template, train, future, fold, fold is folds[-1], pure=False))
    return jobs
