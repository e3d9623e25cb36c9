"""A backtest's independent folds on an active Dask client's workers: one task per refitted fold.

``fit_and_forecast`` is a function of its arguments only (the template, the fold's rows, its future-known
covariates), so that it runs the same on a worker as in process: the forecasts are those of the in-process
executor. Only folds that do not depend on each other go out (see :func:`cluster_folds`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import pandas as pd
from sklearn.base import clone

from ..data.panel import Panel
from ..data.validation import Columns
from ..evaluation.executors import FoldForecasts, fit_fold, forecast_fold, with_account
from ..evaluation.folds import Fold, FoldPlan
from ..evaluation.progress import Progress
from ..model.inference import Forecast
from ..model.params import PRIOR_MEMBERS
from ..model.resolve import member_count

__all__ = ["ClusterFolds", "cluster_folds", "fit_and_forecast"]


@dataclass
class FittedFold:
    """A fold's fitted estimator, its panel, the forecast from each series' cutoff, and the seconds each took."""

    fitted: object
    panel: Panel
    forecast: Forecast
    fit_seconds: float
    predict_seconds: float


def fit_and_forecast(template, train: pd.DataFrame, future: pd.DataFrame | None, fold: Fold, account: bool = False) -> FittedFold:
    """A clone of ``template`` fitted on ``train``, forecast from every series' cutoff in ``fold`` (``account``: with it)."""
    tick = time.perf_counter()
    fitted = clone(template)
    panel = fit_fold(fitted, train, Columns.from_params(template.get_params()), template.freq)
    fit_seconds = time.perf_counter() - tick
    tick = time.perf_counter()
    model = fitted.fitted()
    panel, forecast = forecast_fold(model, model.panel(train) if panel is None else panel, future, fold)
    predict_seconds = time.perf_counter() - tick
    if account:  # the report's shares: not part of the forecast
        forecast = with_account(model, panel, forecast)
    return FittedFold(fitted, panel, forecast, fit_seconds, predict_seconds)


def cluster_folds(plan: FoldPlan, template, folds: list[Fold], report: Progress, client) -> ClusterFolds | None:
    """The executor that fits ``folds`` on ``client``'s workers, or None when they must be fitted in process.

    Only folds that do not depend on each other go out: a fresh clone refitted in every fold (``refit=True``),
    not warm-started from the previous fold's model. An ensemble trained by worker processes (``n_jobs > 1``, with
    ``n_models`` above 1, or None where a fit may start from a prior and train its three members) stays too: Dask
    workers are daemons, which cannot start processes.
    """
    members = member_count(template.n_models, None if template.init == "scratch" else PRIOR_MEMBERS)  # at most
    if plan.refit_every != 1 or plan.warm_start or (template.n_jobs > 1 and members > 1):
        return None
    return ClusterFolds(plan, template, folds, report, client)


class ClusterFolds:
    """Every fold's fit and forecast submitted as a task at the start, gathered in fold order at the end."""

    def __init__(self, plan: FoldPlan, template, folds: list[Fold], report: Progress, client):
        self.plan, self.template, self.folds, self.report, self.client = plan, template, folds, report, client
        self.jobs: list = []

    def start(self, frame: pd.DataFrame) -> None:
        for fold in self.folds:
            train, future = self.plan.fold_rows(frame, fold)
            last = fold is self.folds[-1]
            self.jobs.append(self.client.submit(fit_and_forecast, self.template, train, future, fold, last, pure=False))

    def run_fold(self, fold: Fold, train: pd.DataFrame, future: pd.DataFrame | None) -> None:
        pass  # submitted at the start

    def finish(self, frame: pd.DataFrame) -> FoldForecasts:
        out = FoldForecasts()
        self.report.step(f"gathering {len(self.jobs)} folds fitted on the Dask cluster")
        for index, job in enumerate(self.jobs):  # in fold order
            try:
                done = job.result()
            except BaseException:
                self.client.cancel(self.jobs[index + 1 :])
                raise
            out.estimator, out.last = done.fitted, (done.panel, done.forecast)
            out.add(done.panel, done.forecast, done.fitted.fitted(), self.template.quantiles)
            out.seconds["fit"] += done.fit_seconds
            out.seconds["predict"] += done.predict_seconds
        return out
