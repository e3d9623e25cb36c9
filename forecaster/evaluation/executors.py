"""Ways of running a backtest's folds, each behind one small protocol (:class:`FoldExecutor`).

The backtest walks the folds once, handing each fold's rows to the executor (``run_fold``) beside running the
baselines; ``start`` sees the whole validated frame before the first fold, ``finish`` returns every fold's
forecasts. Each fold is forecast by :func:`forecast_fold` (its cutoffs as the origins of the fitted model's core),
written once and used by every executor, the Dask ones included:

- :class:`FoldByFold`: in process, fold by fold: refits every fold or every ``k`` folds, warm starts, and sliding
  windows without refits (each fold's own panel);
- :class:`OnePass`: no refits with an expanding window: one fit on the first fold's rows, then one panel of the
  whole frame with every fold's cutoffs as origins of one forward pass;
- on an active Dask client, independent refitted folds as one task each (``forecaster.scale.dask_folds``,
  registered as the ``"dask.folds"`` engine).

A Dask DataFrame is backtested where it lies by ``forecaster.scale.dask_backtest`` with the same plan, fold forecast,
baselines and scorer.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import pandas as pd

from ..data.panel import Panel
from ..data.validation import Columns, observed_span
from ..engines import engine
from ..model.fitted import FittedModel
from ..model.inference import Forecast
from .folds import Fold, FoldPlan, check_origins
from .progress import Progress
from .scoring import label


def forecast_fold(model: FittedModel, panel: Panel, future: pd.DataFrame | None, fold: Fold) -> tuple[Panel, Forecast]:
    """``model``'s forecast from every series' cutoff in ``fold``, on the fold's ``panel`` with its future-known
    covariates placed; returns that panel and the forecast."""
    panel = model.with_future(panel, future)
    rows = np.arange(len(panel.ids))
    origins = np.full(len(rows), panel.last_col)
    check_origins(panel, rows, origins, fold)
    return panel, model.forecast_at(panel, rows, origins)


def fit_fold(estimator, train: pd.DataFrame, columns: Columns, offset) -> Panel | None:
    """Fit ``estimator`` on a fold's rows as ``fit`` reads them: each series over its observed span (a cutoff inside a
    run of missing targets leaves rows after the series' last observation, which ``fit`` drops). A series whose span
    up to the cutoff is shorter than one horizon gives no training window: it is left out of the fit (which would
    refuse it) and still forecast. Returns the panel the fit built, to forecast from; None where rows or series were
    dropped, so that the fold is forecast from all its rows."""
    rows, ended = observed_span(train, columns)
    times = rows.groupby(columns.id, sort=False, observed=True)[columns.time]
    sizes = times.size()
    few = sizes.index[sizes.to_numpy() < estimator.horizon]  # few rows; absent ones (fill_gaps) count as periods
    starts, ends = times.min()[few], times.max()[few]
    periods = [len(pd.date_range(a, b, freq=offset)) for a, b in zip(starts, ends, strict=True)]  # the few only
    short = few[np.asarray(periods, dtype=int) < estimator.horizon]
    if len(short) and len(short) < len(sizes):
        rows = rows[~rows[columns.id].isin(short).to_numpy()]
    panel = estimator.fit_frame(rows, None)
    return panel if ended.empty and len(short) == 0 else None


def with_account(model: FittedModel, panel: Panel, forecast: Forecast) -> Forecast:
    """The last fold's forecast with the account of its median, for the report's shares: the state design computes
    it apart (a gradient pass, untimed: not part of the forecast); the observation design has it already."""
    if forecast.account is not None or not model.accountable:
        return forecast
    return model.forecast_ends(panel, account=True)


@dataclass
class FoldForecasts:
    """What an executor gives back: each fold's labelled forecasts, the last fitted estimator, the
    last fold's windows (panel and forecast, with the account where the model has one: the report's attention and
    shares) and the seconds spent fitting and forecasting."""

    predictions: list[pd.DataFrame] = field(default_factory=list)
    estimator: object = None
    last: tuple[Panel, Forecast] | None = None
    seconds: dict = field(default_factory=lambda: {"fit": 0.0, "predict": 0.0})

    def add(self, panel: Panel, forecast: Forecast, model: FittedModel, requested) -> None:
        """One fold's (or one pass's) forecasts, labelled with their cutoffs and the estimator's columns (``requested``:
        its quantile levels)."""
        self.predictions.append(label(panel, forecast, model, requested))


class FoldExecutor(Protocol):
    """A way of running folds: ``start`` once, ``run_fold`` for each fold in order, then ``finish``."""

    def start(self, frame: pd.DataFrame) -> None: ...

    def run_fold(self, fold: Fold, train: pd.DataFrame, future: pd.DataFrame | None) -> None: ...

    def finish(self, frame: pd.DataFrame) -> FoldForecasts: ...


class FoldByFold:
    """In process, fold by fold: a fit where the plan's refit schedule says so, then the fold's forecast."""

    def __init__(self, plan: FoldPlan, template, folds: list[Fold], report: Progress):
        self.plan, self.template, self.folds, self.report = plan, template, folds, report
        self.out = FoldForecasts()

    def start(self, frame: pd.DataFrame) -> None:
        pass

    def fit(self, fold: Fold, train: pd.DataFrame) -> Panel | None:
        """The fold's fit where the schedule calls for one; returns the panel it built (None without a fit)."""
        if not self.plan.refits(fold, self.out.estimator):
            return None
        tick = time.perf_counter()
        self.out.estimator = self.plan.refit_from(self.out.estimator, self.template)
        self.report.step(f"fitting seq2seq on {train[self.plan.columns.id].nunique()} series")
        panel = fit_fold(self.out.estimator, train, self.plan.columns, self.plan.offset or self.plan.freq)
        self.out.seconds["fit"] += time.perf_counter() - tick
        return panel

    def run_fold(self, fold: Fold, train: pd.DataFrame, future: pd.DataFrame | None) -> None:
        panel = self.fit(fold, train)
        tick = time.perf_counter()
        self.report.step("forecasting (network and statistical partners)")
        model = self.out.estimator.fitted()
        panel, forecast = forecast_fold(model, panel if panel is not None else model.panel(train), future, fold)
        self.out.add(panel, forecast, model, self.template.quantiles)
        self.out.seconds["predict"] += time.perf_counter() - tick
        self.out.last = (panel, with_account(model, panel, forecast) if fold is self.folds[-1] else forecast)

    def finish(self, frame: pd.DataFrame) -> FoldForecasts:
        return self.out


class OnePass(FoldByFold):
    """No refits, expanding window: one fit on the first fold's rows, every fold's origins in one forward pass."""

    def run_fold(self, fold: Fold, train: pd.DataFrame, future: pd.DataFrame | None) -> None:
        self.fit(fold, train)

    def finish(self, frame: pd.DataFrame) -> FoldForecasts:
        tick = time.perf_counter()
        folds, columns = self.folds, self.plan.columns
        self.report.step(f"forecasting all {len(folds)} folds' origins in one pass")
        model = self.out.estimator.fitted()
        panel = model.panel(history_only(frame[frame[columns.id].isin(scored_ids(folds))], folds, columns))
        series, origins = fold_windows(panel, folds)
        forecast = model.forecast_at(panel, series, origins)
        self.out.add(panel, forecast, model, self.template.quantiles)
        self.out.seconds["predict"] += time.perf_counter() - tick
        final = slice(len(series) - len(folds[-1].cutoffs), None)
        if forecast.account is None and model.accountable:  # the state design's account: the last fold's windows
            self.out.last = (panel, model.forecast_at(panel, series[final], origins[final], account=True))
        else:
            account = None if forecast.account is None else forecast.account.take(final)
            quantiles, attention = forecast.quantiles[final], forecast.attention[final]
            shut = None if forecast.closed is None else forecast.closed[final]
            self.out.last = (panel, Forecast(series[final], origins[final], quantiles, attention, account, shut))
        return self.out


def executor_for(plan: FoldPlan, template, folds: list[Fold], report: Progress, client=None) -> FoldExecutor:
    """The executor for this plan: independent refitted folds on an active Dask client's workers where there is one
    and its engine takes them, else in process: one pass without refits and an expanding window, else fold by fold."""
    if client is not None:
        on_cluster = engine("dask.folds")(plan, template, folds, report, client)
        if on_cluster is not None:
            return on_cluster
    return OnePass(plan, template, folds, report) if plan.one_pass else FoldByFold(plan, template, folds, report)


def history_only(frame: pd.DataFrame, folds: list[Fold], columns: Columns) -> pd.DataFrame:
    """``frame`` with the targets after each series' last cutoff hidden (NaN): the one-pass panel forecasts from
    the cutoffs and never reads them, and the scores take the actuals from ``frame`` itself. A value only a
    horizon holds is not history, so a check of history (``log_target``'s non-negative targets) must not see it,
    as it does not in a refitted fold.
    """
    ids = frame[columns.id].astype(object)  # a categorical id column would map to categoricals of timestamps
    last = ids.map(folds[-1].cutoffs)
    for fold in folds[-2::-1]:  # a series skipped in the last fold is scored up to an earlier one's cutoff
        last = last.fillna(ids.map(fold.cutoffs))
    after = (frame[columns.time] > last).to_numpy()
    if not after.any():
        return frame
    return frame.assign(**{columns.target: frame[columns.target].mask(after)})


def scored_ids(folds: list[Fold]) -> pd.Index:
    """Every series some fold scores."""
    return pd.Index(sorted({uid for fold in folds for uid in fold.cutoffs.index}, key=str))


def fold_windows(panel: Panel, folds: list[Fold]) -> tuple[np.ndarray, np.ndarray]:
    """Every (series row, origin column) of every fold in one panel, fold by fold."""
    ids = pd.Index(panel.ids)
    series, origins = [], []
    for fold in folds:
        rows = ids.get_indexer(fold.cutoffs.index)
        position = panel.grid.get_indexer(pd.DatetimeIndex(fold.cutoffs.to_numpy()))
        if (rows < 0).any() or (position < 0).any():
            raise ValueError(f"Fold {fold.number}: a scored series or cutoff is not in the panel; please report this.")
        series.append(rows)
        origins.append(panel.last_col - (panel.end[rows] - position))
    return np.concatenate(series), np.concatenate(origins)
