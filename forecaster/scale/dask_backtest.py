"""``backtest`` of a Dask DataFrame: folds fitted on windows drawn on the workers, every partition scored where it lies.

The frame never reaches the client:

1. one pass over the partitions (each of whole series) validates them and gives each series' first and last
   timestamps; the folds are checked on the whole panel (``rolling_origins``: the cutoffs, the skipped series),
   and the model is refused if it was fitted past the first cutoffs, as in process;
2. each fitted fold's model is a Dask fit (``fit_whole_series``) of the fold's rows, which every partition
   cuts at its series' cutoffs lazily, on the workers (a series' cutoffs depend on its own end only, so a
   partition folds its series exactly as the whole panel does);
3. every partition then forecasts its series at each fold's cutoff with that fold's model (network and
   statistical partners), runs the statsforecast baselines on the same rows, and scores all of them
   (``backtest.scored_forecasts``), on the worker that holds it.

The client gathers the metrics per (series, fold, model), the quantile scores pooled per (model, level), the
skipped series and the seconds; the forecasts stay on the workers, as a Dask DataFrame (``result.forecasts``;
write it with ``to_parquet``). A fold's forecasts are those of the in-process backtest with the same fitted
models; the models themselves differ, since a Dask fit trains on streamed windows.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
from sklearn.base import clone

from ..data.frequency import infer_offset, normalise_freq, season_length_for
from ..data.panel import check_on_grid
from ..data.roles import CovariateRoles
from ..data.validation import Columns, clean_history
from ..evaluation.backtest import (
    _baselines,
    _check_not_fitted_past,
    _describe_cutoffs,
    _label,
    _panel,
    _scales,
    backtest_settings,
    backtest_timings,
    in_zone,
    min_train_periods,
    scored_forecasts,
    with_zone,
)
from ..evaluation.fold_forecast import check_origins, fold_data, guard_fold
from ..evaluation.progress import Progress
from ..evaluation.result import BacktestResult
from ..evaluation.splits import Fold, rolling_origins, series_spans
from .dask_fit import _by_whole_series, fit_whole_series, head_rows
from .dask_frames import _shipped
from .window_stream import _flat

__all__ = ["backtest_dask"]

QUANTILE_SUMS = ["pinball", "hits", "n", "abs_y"]


@dataclass(frozen=True)
class FoldPlan:
    """What a partition needs to fold its series as the whole panel's folds do, and to run the baselines."""

    columns: Columns
    roles: CovariateRoles
    freq: str
    horizon: int
    n_windows: int
    step: int
    min_train: int
    sliding: bool
    why: str
    season: int
    baselines: tuple[str, ...]
    levels: tuple[float, ...]


def _clean(part: pd.DataFrame, plan: FoldPlan) -> pd.DataFrame:
    return _clean_with_zone(part, plan)[0]


def _clean_with_zone(part: pd.DataFrame, plan: FoldPlan) -> tuple[pd.DataFrame, str | None]:
    """The partition validated as ``fit`` validates it, on naive timestamps, and the token that restores its zone."""
    return clean_history(_flat(part, plan.columns.id), plan.columns, plan.roles)


def _origins(ends: pd.Series, starts: pd.Series, plan: FoldPlan, empty_ok: bool) -> list[Fold]:
    args = (normalise_freq(plan.freq), plan.horizon, plan.n_windows, plan.step, plan.min_train, plan.sliding, plan.why)
    return rolling_origins(ends, starts, *args, empty_ok=empty_ok)


def _folds(frame: pd.DataFrame, plan: FoldPlan) -> list[Fold]:
    """One partition's folds: its series' cutoffs, which depend on each series' own span only."""
    ends, starts = series_spans(frame, plan.columns.id, plan.columns.time, plan.columns.target)
    return _origins(ends, starts, plan, empty_ok=True)


def series_span(part: pd.DataFrame, plan: FoldPlan) -> pd.DataFrame:
    """Each series' first and last timestamp and its rows, in one partition (validated as ``fit`` validates)."""
    columns = plan.columns
    if part.empty:
        return pd.DataFrame({"first": pd.Series(dtype="datetime64[ns]"), "last": pd.Series(dtype="datetime64[ns]"), "rows": []})
    frame = _clean(part, plan)
    check_on_grid(frame[columns.time], frame[columns.id], normalise_freq(plan.freq))  # before cutoffs are placed on it
    ends, starts = series_spans(frame, columns.id, columns.time, columns.target)
    rows = frame.groupby(columns.id, sort=False, observed=True)[columns.time].size()
    return pd.DataFrame({"first": starts, "last": ends, "rows": rows})


def fold_rows(part: pd.DataFrame, index: int, plan: FoldPlan, meta: pd.DataFrame) -> pd.DataFrame:
    """The training rows of fold ``index`` in one partition: each series up to its cutoff (from its start, sliding)."""
    if part.empty:
        return meta
    frame = _clean(part, plan)
    train, future = fold_data(frame, fold := _folds(frame, plan)[index], plan.columns, plan.roles)
    guard_fold(train, future, fold, plan.columns, plan.roles)
    return train


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
    columns, roles = plan.columns, plan.roles
    frame, tz = _clean_with_zone(part, plan)
    offset = normalise_freq(plan.freq)
    predictions, scales, baseline_frames, skipped, seconds = [], [], [], [], {"predict": 0.0}
    for fold in _folds(frame, plan):
        skipped += [{"unique_id": uid, "fold": fold.index, "reason": why} for uid, why in fold.skipped.items()]
        if fold.cutoffs.empty:
            continue
        fitted = models[fold.index]
        train, future = fold_data(frame, fold, columns, roles)
        guard_fold(train, future, fold, columns, roles)
        tick = time.perf_counter()
        panel = fitted._with_future(_panel(fitted, train, columns), future)
        rows = np.arange(len(panel.ids))
        check_origins(panel, rows, np.full(len(rows), panel.last_col), fold)
        forecast = fitted._forecast(panel, rows, np.full(len(rows), panel.last_col))
        predictions.append(_label(panel, forecast, fitted, template))
        scales.append(_scales(panel, forecast, fitted, plan.season))
        seconds["predict"] += time.perf_counter() - tick
        base = _baselines(train, fold, plan.horizon, offset, plan.season, plan.baselines, 1, columns, seconds, plan.levels)
        baseline_frames.append(base)
    if not predictions:
        return PartitionScores(None, None, None, skipped, seconds)
    forecasts, metrics, quantiles = scored_forecasts(
        predictions, baseline_frames, scales, frame, columns, template, plan.baselines
    )
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
    columns, roles = model._columns(), model._roles()
    frame, rows = _by_whole_series(df, columns.id)
    parts = rows.to_delayed()
    head = head_rows(rows, columns, roles)
    offset = normalise_freq(model.freq) if model.freq else infer_offset(head[columns.time], head[columns.id])
    season = int(season_length or model.season_length or season_length_for(offset))
    horizon, step = model.horizon, model.horizon if step_size is None else step_size
    min_train, why = min_train_periods(horizon, season, baselines)
    levels = () if model.quantiles is None else tuple(model.quantiles)
    plan = FoldPlan(
        columns,
        roles,
        offset.freqstr,
        horizon,
        n_windows,
        step,
        min_train,
        window == "sliding",
        why,
        season,
        tuple(baselines),
        levels,
    )

    report = Progress(progress, n_windows, "backtest")
    report.step("reading every partition once: validation and each series' span")
    spans = pd.concat(dask.compute(*[dask.delayed(series_span)(part, plan) for part in parts]))
    # Each partition checked its rows on a calendar from its own first timestamp; the series' ends, on one calendar,
    # tie those calendars together (daily data at 00:00 in one partition and 12:00 in another is refused here).
    ends = pd.concat([spans["first"], spans["last"]])
    check_on_grid(ends.reset_index(drop=True), ends.index.to_series().reset_index(drop=True), offset)
    folds = _origins(spans["last"], spans["first"], plan, empty_ok=False)  # the whole panel's folds: refused as in process
    _check_not_fitted_past(model, folds[0])
    template = clone(model).set_params(freq=offset.freqstr)
    meta = fold_rows(head.iloc[:0], 0, plan, head.iloc[:0])

    models, fitted, fit_seconds = [], None, 0.0
    for fold in report.folds(folds):
        if fitted is None or (refit_every and fold.index % refit_every == 0):
            tick = time.perf_counter()
            fitted = fitted if (fitted is not None and template.warm_start) else clone(template)
            report.step(f"fitting seq2seq on fold {fold.index + 1}'s rows, windows drawn on the workers")
            train = rows.map_partitions(fold_rows, fold.index, plan, meta, meta=meta)
            fitted = fit_whole_series(fitted, train, quiet=True)
            fit_seconds += time.perf_counter() - tick
            shipped = _shipped(fitted)  # one copy per fitted model (a list of the same object is sent once)
        models.append(shipped)

    report.step(f"forecasting, partnering, baselines and scores on {len(parts)} partitions")
    scored = dask.persist(*[dask.delayed(score_partition)(part, models, template, plan) for part in parts])
    small = dask.compute(*[dask.delayed(_small_parts)(s) for s in scored])
    report.close()
    metrics = pd.concat([part[0] for part in small if part[0] is not None], ignore_index=True)
    pooled = pd.concat([part[1] for part in small if part[1] is not None], ignore_index=True)
    pooled = pooled.groupby(["model", "level"], sort=False)[QUANTILE_SUMS].sum().reset_index()
    skipped = [row for part in small for row in part[2]]
    seconds: dict = {}
    for part in small:
        for name, value in part[3].items():
            seconds[name] = seconds.get(name, 0.0) + value
    forecast_meta = next(part[4] for part in small if part[4] is not None)
    forecasts = dd.from_delayed([dask.delayed(_forecasts_of)(s, forecast_meta) for s in scored], meta=forecast_meta)
    seconds["fit"] = fit_seconds
    settings = backtest_settings(
        model, fitted, folds, offset, season, step, refit, window, baselines, len(spans), spans["rows"].sum()
    )
    tz = next((part[5] for part in small if part[5]), None)
    if tz:
        settings["cutoffs"] = [_describe_cutoffs(with_zone(f.cutoffs, tz)) for f in folds]
    settings.update(
        n_jobs=1,
        occlusion=None,
        seconds=time.perf_counter() - started,
        dask={"partitions": len(parts), "seconds_on_workers": "predict and baseline seconds are summed over partitions"},
    )
    return BacktestResult(
        forecasts=forecasts,
        metrics=metrics,
        skipped=pd.DataFrame(skipped, columns=["unique_id", "fold", "reason"]),
        timings=backtest_timings(seconds, baselines),
        settings=settings,
        attention=None,
        data=None,
        last_model=fitted,
        quantile_metrics=pooled,
    )
