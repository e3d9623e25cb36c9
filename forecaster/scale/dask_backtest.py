"""``backtest`` of a Dask DataFrame: folds fitted on windows drawn on the workers, every partition scored where it lies.

The frame never reaches the client:

1. one pass over the partitions (each of whole series) validates them and gives each series' first and last
   timestamps; the folds are checked on the whole panel (``rolling_origins``: the cutoffs, the skipped series),
   and the model is refused if it was fitted past the first cutoffs, as in process (one ``FoldPlan`` for both);
2. each fitted fold's model is a Dask fit (``fit_whole_series``) of the fold's rows, which every partition
   cuts at its series' cutoffs lazily, on the workers (a series' cutoffs depend on its own end only, so a
   partition folds its series exactly as the whole panel does);
3. every partition then forecasts its series at each fold's cutoff with that fold's model (network and
   statistical partners), runs the statsforecast baselines on the same rows, and scores all of them
   (``evaluation.scoring.scored_forecasts``), on the worker that holds it.

The client gathers the metrics per (series, fold, model), the quantile scores pooled per (model, level), the
skipped series and the seconds; the forecasts stay on the workers, as a Dask DataFrame (``result.forecasts``;
write it with ``to_parquet``). A fold's forecasts are those of the in-process backtest with the same fitted
models; the models themselves differ, since a Dask fit trains on streamed windows.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import dask
import dask.dataframe as dd
import pandas as pd

from ..data.frequency import infer_offset, normalise_freq
from ..data.panel import check_on_grid
from ..data.validation import clean_history, columns_and_roles
from ..evaluation.backtest import backtest_settings, backtest_timings
from ..evaluation.baselines import fold_baselines, warn_baseline_notes
from ..evaluation.executors import FoldForecasts, forecast_fold
from ..evaluation.folds import FoldPlan, check_not_fitted_past, fold_template, series_spans
from ..evaluation.progress import Progress
from ..evaluation.result import BacktestResult
from ..evaluation.scoring import (
    describe_cutoffs,
    fold_scales,
    in_zone,
    scored_forecasts,
    unscored_windows,
    verdict_coverage,
    with_zone,
)
from .dask_fit import by_whole_series, fit_whole_series
from .dask_frames import head_rows, shipped
from .window_stream import flat_partition

__all__ = ["backtest_dask"]

QUANTILE_SUMS = ["pinball", "hits", "n", "abs_y"]


def _clean_with_zone(part: pd.DataFrame, plan: FoldPlan) -> tuple[pd.DataFrame, str | None]:
    """The partition validated as ``fit`` validates it, on naive timestamps, and the token that restores its zone."""
    return clean_history(flat_partition(part, plan.columns.id), plan.columns, plan.roles)


def series_span(part: pd.DataFrame, plan: FoldPlan) -> pd.DataFrame:
    """Each series' first and last timestamp and its rows, in one partition (validated as ``fit`` validates)."""
    columns = plan.columns
    if part.empty:
        return pd.DataFrame({"first": pd.Series(dtype="datetime64[ns]"), "last": pd.Series(dtype="datetime64[ns]"), "rows": []})
    frame = _clean_with_zone(part, plan)[0]
    check_on_grid(frame[columns.time], frame[columns.id], normalise_freq(plan.freq))  # before cutoffs are placed on it
    ends, starts = series_spans(frame, columns.id, columns.time, columns.target)
    rows = frame.groupby(columns.id, sort=False, observed=True)[columns.time].size()
    return pd.DataFrame({"first": starts, "last": ends, "rows": rows})


def fold_rows(part: pd.DataFrame, index: int, plan: FoldPlan, meta: pd.DataFrame) -> pd.DataFrame:
    """The training rows of fold ``index`` in one partition: each series up to its cutoff (from its start, sliding)."""
    if part.empty:
        return meta
    frame = _clean_with_zone(part, plan)[0]
    return plan.fold_rows(frame, plan.folds_of(frame)[index])[0]


@dataclass
class PartitionScores:
    """One partition's forecasts, metrics, pooled quantile scores, skipped series and seconds."""

    forecasts: pd.DataFrame | None
    metrics: pd.DataFrame | None
    quantiles: pd.DataFrame | None
    skipped: list[dict] = field(default_factory=list)
    seconds: dict = field(default_factory=dict)
    tz: str | None = None  # restores the caller's zone (``validation.restore_zone``), already applied to the frames


def score_partition(part: pd.DataFrame, models: list, template, plan: FoldPlan) -> PartitionScores:
    """Forecast, partner, baseline and score every fold of one partition's series (runs on a worker)."""
    if part.empty:
        return PartitionScores(None, None, None)
    frame, tz = _clean_with_zone(part, plan)
    out, baseline_frames, scales, skipped = FoldForecasts(), [], [], []
    seconds = {"predict": 0.0}
    folds = plan.folds_of(frame)
    for fold in folds:
        skipped += [{"unique_id": uid, "fold": fold.number, "reason": why} for uid, why in fold.skipped.items()]
        if fold.cutoffs.empty:
            continue
        train, future = plan.fold_rows(frame, fold)
        tick = time.perf_counter()
        model = models[fold.index].fitted()
        panel, forecast = forecast_fold(model, model.panel(train), future, fold)
        out.add(panel, forecast, model, template.quantiles)
        scales.append(fold_scales(train, fold, plan.columns, plan.season, normalise_freq(plan.freq)))
        seconds["predict"] += time.perf_counter() - tick
        baseline_frames.append(fold_baselines(train, fold, plan, 1, seconds))
    if not out.predictions:
        return PartitionScores(None, None, None, skipped, seconds)
    scored = scored_forecasts(out.predictions, baseline_frames, scales, frame, plan.columns, template.quantiles, plan.baselines)
    forecasts, metrics, quantiles = scored
    skipped += unscored_windows(metrics, folds, tz)
    pooled = quantiles.groupby(["model", "level"], sort=False)[QUANTILE_SUMS].sum().reset_index()
    if tz:  # the caller's zone, as the in-process backtest and ``predict`` give it back
        forecasts, metrics = in_zone(forecasts, metrics, tz=tz)
    return PartitionScores(forecasts, metrics, pooled, skipped, seconds, tz)


def _forecasts_of(scores: PartitionScores, meta: pd.DataFrame) -> pd.DataFrame:
    return meta if scores.forecasts is None else scores.forecasts


def _small_parts(scores: PartitionScores) -> tuple:
    """What the client gathers of a partition: all but its forecasts (of which only the empty frame, for the types)."""
    empty = None if scores.forecasts is None else scores.forecasts.iloc[:0]
    return scores.metrics, scores.quantiles, scores.skipped, scores.seconds, empty, scores.tz


def backtest_dask(
    model,
    df,
    future_covariates_df=None,
    n_windows: int = 3,
    step_size: int | None = None,
    refit_every: int = 1,
    refit: bool | int = True,
    window: str = "expanding",
    baselines: tuple[str, ...] = ("seasonal_naive", "auto_ets"),
    season_length: int | None = None,
    progress: bool = True,
) -> BacktestResult:
    """``backtest`` of the Dask DataFrame ``df`` (arguments as checked by ``backtest``); see the module docstring.

    Raises:
        ValueError: ``future_covariates_df`` is given (future-known covariates must be columns of ``df``), a
            partition holds bad rows, or a fold leaves no series to score.
    """
    if future_covariates_df is not None:
        raise ValueError(
            "`future_covariates_df` is not taken with a Dask `df`: give the future-known covariates as columns of `df`."
        )
    started = time.perf_counter()
    columns, roles = columns_and_roles(model.get_params())
    _, rows = by_whole_series(df, columns.id)
    parts = rows.to_delayed()
    head = head_rows(rows, columns, roles)
    offset = normalise_freq(model.freq) if model.freq else infer_offset(head[columns.time], head[columns.id])
    plan = FoldPlan.for_model(model, offset, n_windows, step_size, refit_every, window, baselines, season_length)
    plan = replace(plan, offset=None)  # the partitions place the cutoffs on the alias's calendar (``plan.freq``)
    report = Progress(progress, n_windows, "backtest")
    spans, folds = _whole_panel_folds(parts, plan, offset, report)
    check_not_fitted_past(model, folds[0])
    warn_baseline_notes(plan.baselines, plan.season)
    template = fold_template(model, offset, season_length)
    meta = fold_rows(head.iloc[:0], 0, plan, head.iloc[:0])
    models, fitted, fit_seconds = [], None, 0.0
    for fold in report.folds(folds):
        if plan.refits(fold, fitted):
            tick = time.perf_counter()
            fitted = plan.refit_from(fitted, template)
            report.step(f"fitting seq2seq on fold {fold.index + 1}'s rows, windows drawn on the workers")
            train = rows.map_partitions(fold_rows, fold.index, plan, meta, meta=meta)
            fitted = fit_whole_series(fitted, train, quiet=True)
            fit_seconds += time.perf_counter() - tick
            model_task = shipped(fitted)  # one copy per fitted model (a list of the same object is sent once)
        models.append(model_task)
    report.step(f"forecasting, partnering, baselines and scores on {len(parts)} partitions")
    scored = dask.persist(*[dask.delayed(score_partition)(part, models, template, plan) for part in parts])
    return _gathered(scored, model, fitted, folds, plan, spans, refit, window, {"fit": fit_seconds}, started, report)


def _whole_panel_folds(parts: list, plan: FoldPlan, offset, report: Progress) -> tuple[pd.DataFrame, list]:
    """One pass over the partitions (validation and each series' span), then the whole panel's folds."""
    report.step("reading every partition once: validation and each series' span")
    spans = pd.concat(dask.compute(*[dask.delayed(series_span)(part, plan) for part in parts]))
    # Each partition checked its rows on a calendar from its own first timestamp; the series' ends, on one calendar,
    # tie those calendars together (daily data at 00:00 in one partition and 12:00 in another is refused here).
    ends = pd.concat([spans["first"], spans["last"]])
    check_on_grid(ends.reset_index(drop=True), ends.index.to_series().reset_index(drop=True), offset)
    return spans, plan.folds(spans["last"], spans["first"])  # the whole panel's folds: refused as in process


def _gathered(scored, model, fitted, folds, plan, spans, refit, window, seconds, started, report) -> BacktestResult:
    """The partitions' metrics, pooled quantile scores, skipped series and seconds gathered; the forecasts left lazy."""
    small = dask.compute(*[dask.delayed(_small_parts)(s) for s in scored])
    report.close()
    metrics = pd.concat([part[0] for part in small if part[0] is not None], ignore_index=True)
    pooled = pd.concat([part[1] for part in small if part[1] is not None], ignore_index=True)
    pooled = pooled.groupby(["model", "level"], sort=False)[QUANTILE_SUMS].sum().reset_index()
    skipped = [row for part in small for row in part[2]]
    worker_seconds: dict = {}
    for part in small:
        for name, value in part[3].items():
            worker_seconds[name] = worker_seconds.get(name, 0.0) + value
    forecast_meta = next(part[4] for part in small if part[4] is not None)
    forecasts = dd.from_delayed([dask.delayed(_forecasts_of)(s, forecast_meta) for s in scored], meta=forecast_meta)
    settings = backtest_settings(model, fitted, folds, plan, refit, window, len(spans), spans["rows"].sum())
    settings["verdict"] = verdict_coverage(metrics, folds, plan.horizon, len(spans))
    tz = next((part[5] for part in small if part[5]), None)
    if tz:
        settings["cutoffs"] = [describe_cutoffs(with_zone(f.cutoffs, tz)) for f in folds]
    settings.update(
        n_jobs=1,
        occlusion=None,
        seconds=time.perf_counter() - started,
        dask={"partitions": len(scored), "seconds_on_workers": "predict and baseline seconds are summed over partitions"},
    )
    return BacktestResult(
        forecasts=forecasts,
        metrics=metrics,
        skipped=pd.DataFrame(skipped, columns=["unique_id", "fold", "reason"]),
        timings=backtest_timings({**worker_seconds, **seconds}, plan.baselines),
        settings=settings,
        attention=None,
        data=None,
        last_model=fitted,
        quantile_metrics=pooled,
    )
