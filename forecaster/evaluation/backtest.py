"""Rolling-origin backtest of a Seq2SeqForecaster against statsforecast baselines.

``backtest`` reads as its plan: validate the frame once, plan the folds (``folds``: cutoffs per series, the refit
schedule, each fold's rows and the leakage guard), hand each fold to an executor (``executors``: in process with
refits or warm starts, one pass without refits, or on a Dask client's workers), run the baselines on the same rows,
and score every model alike (``scoring``: MASE scales from each fold's history up to its cutoff, through the same
kernel as the training loss weights). A Dask DataFrame is backtested where it lies (``forecaster.scale.dask_backtest``).
"""

from __future__ import annotations

import numbers
import time
import warnings

import pandas as pd

from ..data.dates import messages_in_zone
from ..data.frequency import infer_offset, normalise_freq
from ..data.panel import check_calendar_span, check_on_grid
from ..data.seen_values import UnseenValueWarning
from ..data.validation import clean_history, columns_and_roles, merge_covariates
from ..engines import active_client, engine, is_dask_frame
from ..estimator import Seq2SeqForecaster
from ..model.faithfulness import RANKINGS, occlusions
from ..model.outputs import attention_frame, check_column_names
from ..model.params import check_arguments, check_params
from .baselines import BASELINES, fold_baselines, warn_baseline_notes
from .executors import executor_for
from .folds import FoldPlan, check_not_fitted_past, fold_data, fold_template, guard_fold, series_spans, warn_ragged_cutoffs
from .progress import Progress
from .result import BacktestResult
from .scoring import (
    MODEL_NAME,
    describe_cutoffs,
    fold_scales,
    in_zone,
    scored_forecasts,
    unscored_windows,
    verdict_coverage,
    with_zone,
)
from .warn_once import each_warning_once

__all__ = ["BacktestResult", "backtest", "fold_data", "guard_fold"]


@each_warning_once
def backtest(
    model: Seq2SeqForecaster,
    df: pd.DataFrame,
    future_covariates_df: pd.DataFrame | None = None,
    n_windows: int = 3,
    step_size: int | None = None,
    refit: bool | int = True,
    window: str = "expanding",
    baselines: tuple[str, ...] = ("seasonal_naive", "auto_ets"),
    season_length: int | None = None,
    n_jobs: int = 1,
    progress: bool = True,
) -> BacktestResult:
    """Score ``model`` and baselines over ``n_windows`` rolling origins.

    Every fold gives the model and the baselines exactly the same data: all rows with
    ``ds <= cutoff`` (per series), plus future-known covariates for the fold's horizon
    (from ``df``, or from ``future_covariates_df``, which must then hold the ones ``df`` lacks and no other
    declared one: a covariate in both frames is refused, since either choice would be silent). The model is
    cloned and fitted per fold (``refit=True``), every ``k`` folds (``refit=k``) or once on the first
    fold's data (``refit=False``: all origins in one forward pass); with ``model.warm_start`` each refit
    continues from the previous fold's model. ``window="sliding"`` keeps each series' first-fold history
    length. MASE scales come from each fold's training data. ``n_jobs`` parallelises the baselines; an
    active Dask client runs them, and independent refitted folds, on its workers (same forecasts).
    A Dask DataFrame ``df`` is backtested where it lies: forecasts come back as a Dask DataFrame.

    ``baselines``: any of ``"seasonal_naive"``, ``"auto_ets"`` and ``"mstl"`` (statsforecast's MSTL with the
    seasons of the frequency that each series' history holds twice: the week and the year for daily data, the day
    and the week for hourly and finer; ``data.frequency.seasons_for``). Each series is read from its first to its
    last observed target; a window the verdict cannot score is listed in ``skipped`` with its reason.
    """
    if not isinstance(model, Seq2SeqForecaster):
        raise TypeError(f"`model` must be a Seq2SeqForecaster; got {type(model).__name__}.")
    if window not in ("expanding", "sliding"):
        raise ValueError(f"`window` must be 'expanding' or 'sliding'; got {window!r}.")
    refit_every = check_backtest_arguments(n_windows, step_size, refit, baselines, season_length, n_jobs)
    check_column_names(model.id_col, model.time_col, model.target_col)
    if is_dask_frame(df):
        arguments = dict(n_windows=n_windows, step_size=step_size, refit_every=refit_every, refit=refit, window=window)
        options = dict(baselines=tuple(baselines), season_length=season_length, progress=progress)
        return engine("dask.backtest")(model, df, future_covariates_df, **arguments, **options)
    started = time.perf_counter()
    frame, tz, offset = _validated(model, df, future_covariates_df)
    plan = FoldPlan.for_model(model, offset, n_windows, step_size, refit_every, window, baselines, season_length)
    columns = plan.columns
    folds = plan.folds(*series_spans(frame, columns.id, columns.time, columns.target))
    check_not_fitted_past(model, folds[0])
    with messages_in_zone(tz):  # the cutoffs are naive: named in the data's zone
        warn_ragged_cutoffs(folds, columns.id)
    warn_baseline_notes(plan.baselines, plan.season)
    report, client = Progress(progress, len(folds), "backtest"), active_client()  # baselines go to an active client
    executor = executor_for(plan, fold_template(model, offset, season_length), folds, report, client)
    executor.start(frame)
    baseline_frames, scales, seconds = [], [], {}
    with messages_in_zone(tz):  # the folds' frames are naive: their fits' notes name times in the data's zone
        for fold in report.folds(folds):
            train, future = plan.fold_rows(frame, fold)
            executor.run_fold(fold, train, future)
            baseline_frames.append(fold_baselines(train, fold, plan, n_jobs, seconds, report, client))
            scales.append(fold_scales(train, fold, columns, plan.season, normalise_freq(plan.freq)))
        out = executor.finish(frame)
    scored = scored_forecasts(out.predictions, baseline_frames, scales, frame, columns, model.quantiles, plan.baselines)
    settings = backtest_settings(model, out.estimator, folds, plan, refit, window, frame[columns.id].nunique(), len(frame))
    occlusion = occlusion_at_last_fold(out.estimator, *plan.fold_rows(frame, folds[-1]), report)
    settings.update(n_jobs=n_jobs, occlusion=occlusion, seconds=time.perf_counter() - started)
    return _result(scored, frame, tz, folds, columns, out, settings, {**seconds, **out.seconds}, plan.baselines)


def _result(scored, frame, tz, folds, columns, out, settings, seconds, baselines) -> BacktestResult:
    """The backtest's result, its timestamps back in the caller's zone (the work is done on naive timestamps)."""
    forecasts, metrics, quantile_metrics = scored
    unscored = unscored_windows(metrics, folds, tz)  # on the naive timestamps the folds hold
    settings["verdict"] = verdict_coverage(metrics, folds, settings["horizon"], frame[columns.id].nunique())
    if tz:
        settings["cutoffs"] = [describe_cutoffs(with_zone(f.cutoffs, tz)) for f in folds]
        forecasts, metrics, quantile_metrics = in_zone(forecasts, metrics, quantile_metrics, tz=tz)
        frame = frame.assign(**{columns.time: with_zone(frame[columns.time], tz)})
    values = out.estimator.state_.network.values
    skipped = [{"unique_id": uid, "fold": fold.number, "reason": why} for fold in folds for uid, why in fold.skipped.items()]
    skipped += unscored
    return BacktestResult(
        forecasts=forecasts,
        metrics=metrics,
        skipped=pd.DataFrame(skipped, columns=["unique_id", "fold", "reason"]),
        timings=backtest_timings(seconds, baselines),
        settings=settings,
        attention=attention_frame(*out.last, columns.id, columns.time, tz, True, values),
        data=frame,
        last_model=out.estimator,
        quantile_metrics=quantile_metrics,
    )


def _validated(model, df: pd.DataFrame, future_covariates_df: pd.DataFrame | None):
    """The whole frame validated once (future-known covariates merged in when given apart), its zone and frequency."""
    check_params(model.get_params())
    columns, roles = columns_and_roles(model.get_params())
    if future_covariates_df is None:
        frame, tz = clean_history(df, columns, roles)
    else:
        merged, tz = merge_covariates(df, future_covariates_df, columns, roles)
        frame, _ = clean_history(merged, columns, roles)
    with messages_in_zone(tz):  # the frame's times are naive (sub-daily zoned data in UTC): named in the data's zone
        offset = normalise_freq(model.freq) if model.freq else infer_offset(frame[columns.time], frame[columns.id])
    check_calendar_span(frame[columns.time], offset, len(frame))
    check_on_grid(frame[columns.time], frame[columns.id], offset)
    return frame, tz, offset


def backtest_timings(seconds: dict, baselines) -> pd.DataFrame:
    """Seconds per model: ``seconds`` holds ``fit`` and ``predict`` for the model and one entry per baseline."""
    return pd.DataFrame(
        [
            {"model": MODEL_NAME, "fit_seconds": seconds.get("fit", 0.0), "predict_seconds": seconds.get("predict", 0.0)},
            *[{"model": b, "fit_seconds": seconds.get(b, 0.0), "predict_seconds": 0.0} for b in baselines],
        ]
    )


def backtest_settings(model, fitted, folds: list, plan: FoldPlan, refit, window: str, n_series: int, n_rows: int) -> dict:
    """The settings a backtest reports (each path adds its own: jobs, the occlusion check, the seconds)."""
    return {
        "n_series": int(n_series),
        "n_rows": int(n_rows),
        "freq": plan.freq,
        "season_length": plan.season,
        "horizon": model.horizon,
        "n_windows": len(folds),
        "step_size": plan.step,
        "refit": refit,
        "window": window,
        "baselines": list(plan.baselines),
        "cutoffs": [describe_cutoffs(f.cutoffs) for f in folds],
        "model_params": model.get_params(),
        "blend_weights": fitted.fitted().blend,
    }


# Series in the sample of the last fold on which a backtest checks that attention is faithful, and the points occluded
# in each (at most half the window).
OCCLUSION_SAMPLE = 50
OCCLUSION_POINTS = 3


def occlusion_at_last_fold(fitted, train: pd.DataFrame, future, report) -> dict:
    """The occlusion check (``model.faithfulness``) of the maps, and of the shares where there are any, on a fixed
    sample of the last fold's series."""
    report.step("occlusion check of the attention maps and the shares")
    rankings = RANKINGS if fitted.fitted().accountable else ("weight",)
    train, future = observed_at_cutoff(train, future, fitted)
    n_points = min(OCCLUSION_POINTS, fitted.input_size_ // 2)  # the most and the least attended points never overlap
    if n_points < 1:  # a window of one period: nothing to compare
        return {"ratio": float("nan"), "most": float("nan"), "least": float("nan"), "n_series": 0}
    with warnings.catch_warnings():  # the fold's horizon holds the data's own values: a backtest does not warn of them
        warnings.simplefilter("ignore", UnseenValueWarning)
        results = occlusions(fitted, train, future, n_points, max_series=OCCLUSION_SAMPLE, rank_by=rankings)
    maps = results["weight"]
    check = {"ratio": maps.ratio, "most": maps.most_attended, "least": maps.least_attended, "n_series": maps.n_series}
    if "contribution" in results:
        check["share_ratio"] = results["contribution"].ratio
    return check


def observed_at_cutoff(train: pd.DataFrame, future: pd.DataFrame | None, fitted) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The fold's rows of the series observed at their cutoff: the occlusion check forecasts each series from the
    end of what it is given, and a series whose cutoff falls in a gap would be read only up to its last observation."""
    ids, target = fitted.id_col, fitted.target_col
    ends = train.drop_duplicates(ids, keep="last").set_index(ids)[target]  # each series' row at its cutoff
    usable = ends.index[ends.notna().to_numpy()]
    if len(usable) in (0, len(ends)):
        return train, future
    keep = train[ids].isin(usable)
    return train.loc[keep.to_numpy()], None if future is None else future.loc[future[ids].isin(usable).to_numpy()]


def check_backtest_arguments(n_windows, step_size, refit, baselines, season_length=None, n_jobs=1) -> int:
    """Refuse malformed backtest arguments with a message naming them; returns the refit period (0: never).

    ``season_length`` (None or a positive integer) and ``n_jobs`` (a positive integer) are checked as the
    estimator checks its own: a flag, a fraction, zero or a word is refused, never read as something else.
    """
    check_arguments(n_windows=n_windows, step_size=step_size, season_length=season_length, n_jobs=n_jobs)
    if isinstance(baselines, str) or not all(isinstance(b, str) for b in baselines):
        raise ValueError(f"`baselines` must be a tuple of names such as ('seasonal_naive', 'auto_ets'); got {baselines!r}.")
    unknown = [b for b in baselines if b not in BASELINES]
    if unknown:
        raise ValueError(f"Unknown baseline(s) {unknown}; choose from {BASELINES}.")
    repeated = sorted({b for b in baselines if list(baselines).count(b) > 1})
    if repeated:
        raise ValueError(f"`baselines` names {repeated} more than once; name each baseline once.")
    if isinstance(refit, bool) or (isinstance(refit, numbers.Integral) and refit >= 1):
        return int(refit)
    raise ValueError(f"`refit` must be True, False or a positive int; got {refit!r}.")
