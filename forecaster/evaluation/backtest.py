"""Rolling-origin backtest of a Seq2SeqForecaster against statsforecast baselines.

The frame is validated once. Each fold's forecasts come from the inference core with the
fold's cutoffs as origins: a refitted fold forecasts from the panel its fit built; without
refits (``refit=False``) one panel of the whole frame serves every fold, each cutoff passed
as an origin of the same forward pass. MASE scales come from the same kernel as the training
loss weights, on each fold's history up to its cutoff.
"""

from __future__ import annotations

import numbers
import reprlib
import time

import numpy as np
import pandas as pd
from sklearn.base import clone

from ..data.frequency import infer_offset, normalise_freq, season_length_for
from ..data.panel import Panel, check_calendar_span, check_on_grid
from ..data.roles import LeakageError
from ..data.scaling import mase_scale, naive_error_table
from ..data.validation import Columns, clean_history, merge_covariates, restore_zone
from ..estimator import Seq2SeqForecaster
from ..model.file_layout import MAX_STEPS
from ..model.inference import Forecast, model_panel, state_units, target_values
from ..model.outputs import attention_frame, forecast_frame, quantile_column
from ..model.params import check_params
from ..scale.dispatch import active_client, fold_client, is_dask_frame
from .baselines import BASELINES, run_baselines
from .faithfulness import RANKINGS, occlusions
from .fold_forecast import check_origins, fold_data, guard_fold, submit_folds
from .metrics import quantile_columns, score_forecasts, score_quantiles
from .progress import Progress
from .result import BacktestResult
from .splits import Fold, rolling_origins, series_spans

MODEL_NAME = "seq2seq"

__all__ = ["BacktestResult", "backtest", "fold_data", "guard_fold"]


def _check_not_fitted_past(model: Seq2SeqForecaster, first: Fold) -> None:
    """Refuse a model that has already seen data after the first fold's cutoffs.

    Per series, its training data must end by its first cutoff; across the panel, the
    model must not have seen any period after the latest first cutoff (a global model
    learns shared shocks from other series too).
    """
    ends = getattr(model, "training_end_", None)
    if ends is None or first.cutoffs.empty:
        return
    common = ends.index.intersection(first.cutoffs.index)
    late = ends[common] > first.cutoffs[common]
    if late.any() or ends.max() > first.cutoffs.max():
        names = reprlib.repr(list(late.index[late])) if late.any() else f"data up to {ends.max()}"
        raise LeakageError(
            f"The model was already fitted on data that reaches past the first cutoff ({names}); "
            "a backtest of a model that has seen the test periods is meaningless. Pass an unfitted model."
        )


def _prepare(model: Seq2SeqForecaster, df: pd.DataFrame, future_covariates_df: pd.DataFrame | None):
    """The whole frame validated once (with future-known covariates merged in when given apart)."""
    check_params(model.get_params())
    columns, roles = model._columns(), model._roles()
    if future_covariates_df is None:
        frame, tz = clean_history(df, columns, roles)
        return frame, columns, roles, tz
    merged, tz = merge_covariates(df, future_covariates_df, columns, roles)
    frame, _ = clean_history(merged, columns, roles)
    return frame, columns, roles, tz


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
    (from ``df``, or from ``future_covariates_df`` when ``df`` lacks those columns).
    The model is cloned and fitted per fold (``refit=True``), every ``k`` folds
    (``refit=k``) or once on the first fold's data (``refit=False``, all origins then
    scored in one forward pass). With ``model.warm_start`` each refit continues from the
    previous fold's model instead of a fresh clone. ``window="sliding"`` keeps each series'
    first-fold history length in every fold (at least the periods a fold needs to score it). MASE
    scales come from each fold's training data.
    ``n_jobs`` parallelises the statsforecast baselines. With an active Dask ``distributed`` client the
    baselines run on its workers instead (``forecaster.scale.dask_baselines``), and so do the refitted
    folds when they do not depend on each other (``refit=True`` without warm start; one task per fold,
    ``fold_forecast.fit_and_forecast``), with the same forecasts.

    A Dask DataFrame ``df`` is backtested where it lies (``forecaster.scale.dask_backtest``): each fold's
    model is a Dask fit of the fold's rows, and every partition forecasts, partners, runs the baselines
    and scores its own series; the forecasts come back as a Dask DataFrame, the metrics as pandas.
    """
    if not isinstance(model, Seq2SeqForecaster):
        raise TypeError(f"`model` must be a Seq2SeqForecaster; got {type(model).__name__}.")
    if window not in ("expanding", "sliding"):
        raise ValueError(f"`window` must be 'expanding' or 'sliding'; got {window!r}.")
    refit_every = check_backtest_arguments(n_windows, step_size, refit, baselines, season_length, n_jobs)
    if is_dask_frame(df):
        from ..scale.dask_backtest import backtest_dask

        arguments = dict(n_windows=n_windows, step_size=step_size, refit_every=refit_every, refit=refit, window=window)
        return backtest_dask(
            model,
            df,
            future_covariates_df,
            baselines=tuple(baselines),
            season_length=season_length,
            progress=progress,
            **arguments,
        )
    started = time.perf_counter()
    frame, columns, roles, tz = _prepare(model, df, future_covariates_df)
    offset = normalise_freq(model.freq) if model.freq else infer_offset(frame[columns.time], frame[columns.id])
    season = int(season_length or model.season_length or season_length_for(offset))
    horizon, step = model.horizon, model.horizon if step_size is None else step_size
    check_calendar_span(frame[columns.time], offset, len(frame))
    check_on_grid(frame[columns.time], frame[columns.id], offset)
    ends, starts = series_spans(frame, columns.id, columns.time, columns.target)
    min_train, why = min_train_periods(horizon, season, baselines)
    sliding = window == "sliding"
    folds = rolling_origins(ends, starts, offset, horizon, n_windows, step, min_train, sliding, why)
    _check_not_fitted_past(model, folds[0])
    template = clone(model).set_params(freq=offset.freqstr)

    predictions, scales, baseline_frames, skipped = [], [], [], []
    seconds = {"fit": 0.0, "predict": 0.0}
    fitted, last = None, None
    report = Progress(progress, len(folds), "backtest")
    client = active_client()  # baselines, and independent folds, go to an active Dask client's workers
    jobs = submit_folds(fold_client(client, template, refit_every), template, frame, folds, columns, roles)
    for fold in report.folds(folds):
        train, future = fold_data(frame, fold, columns, roles)
        guard_fold(train, future, fold, columns, roles)
        skipped += [{"unique_id": uid, "fold": fold.index, "reason": why} for uid, why in fold.skipped.items()]
        panel, in_process = None, not jobs  # or fitted and forecast on the cluster, gathered below
        if in_process and (fitted is None or (refit_every and fold.index % refit_every == 0)):
            tick = time.perf_counter()
            fitted = fitted if (fitted is not None and template.warm_start) else clone(template)
            report.step(f"fitting seq2seq on {train[columns.id].nunique()} series")
            panel = fitted._fit_frame(train, None)
            seconds["fit"] += time.perf_counter() - tick
        if in_process and (refit_every or window == "sliding"):  # from the fold's own panel, its cutoffs as origins
            tick = time.perf_counter()
            report.step("forecasting (network and statistical partners)")
            panel = fitted._with_future(panel if panel is not None else _panel(fitted, train, columns), future)
            rows = np.arange(len(panel.ids))
            check_origins(panel, rows, np.full(len(rows), panel.last_col), fold)
            last = (panel, fitted._forecast(panel, rows, np.full(len(rows), panel.last_col)))
            predictions.append(_label(*last, fitted, model))
            scales.append(_scales(*last, fitted, season))
            seconds["predict"] += time.perf_counter() - tick
            if fold is folds[-1] and last[1].account is None and fitted._accountable():  # the report's shares, untimed
                last = (panel, fitted._forecast(panel, rows, np.full(len(rows), panel.last_col), account=True))
        levels = () if model.quantiles is None else tuple(model.quantiles)
        baseline_frames.append(
            _baselines(train, fold, horizon, offset, season, baselines, n_jobs, columns, seconds, levels, report, client)
        )
    if jobs:
        report.step(f"gathering {len(jobs)} folds fitted on the Dask cluster")
    for index, job in enumerate(jobs):  # in fold order
        try:
            done = job.result()
        except BaseException:
            client.cancel(jobs[index + 1 :])
            raise
        fitted, last = done.fitted, (done.panel, done.forecast)
        predictions.append(_label(*last, fitted, model))
        scales.append(_scales(*last, fitted, season))
        seconds["fit"] += done.fit_seconds
        seconds["predict"] += done.predict_seconds
    if not refit_every and window == "expanding":  # one panel, every fold's cutoffs as origins of one pass
        tick = time.perf_counter()
        report.step(f"forecasting all {len(folds)} folds' origins in one pass")
        panel = _panel(fitted, _history_only(frame[frame[columns.id].isin(_scored_ids(folds))], folds, columns), columns)
        series, origins = _fold_windows(panel, folds)
        forecast = fitted._forecast(panel, series, origins)
        predictions.append(_label(panel, forecast, fitted, model))
        scales.append(_scales(panel, forecast, fitted, season))
        seconds["predict"] += time.perf_counter() - tick
        final = slice(len(series) - len(folds[-1].cutoffs), None)
        if forecast.account is None and fitted._accountable():  # the state design's account: the last fold's windows
            last = (panel, fitted._forecast(panel, series[final], origins[final], account=True))
        else:
            account = None if forecast.account is None else forecast.account.take(final)
            last = (panel, Forecast(series[final], origins[final], forecast.quantiles[final], forecast.attention[final], account))
    scored = scored_forecasts(predictions, baseline_frames, scales, frame, columns, model, baselines)
    forecasts, metrics, quantile_metrics = scored
    timings = backtest_timings(seconds, baselines)
    settings = backtest_settings(
        model, fitted, folds, offset, season, step, refit, window, baselines, frame[columns.id].nunique(), len(frame)
    )
    settings.update(
        n_jobs=n_jobs,
        occlusion=_occlusion_at_last_fold(fitted, train, future, columns, report),
        seconds=time.perf_counter() - started,
    )
    if tz:  # the caller's time zone, as ``predict`` gives it back (the work above is on naive timestamps)
        settings["cutoffs"] = [_describe_cutoffs(with_zone(f.cutoffs, tz)) for f in folds]
        forecasts, metrics, quantile_metrics = in_zone(forecasts, metrics, quantile_metrics, tz=tz)
        frame = frame.assign(**{columns.time: with_zone(frame[columns.time], tz)})
    return BacktestResult(
        forecasts=forecasts,
        metrics=metrics,
        skipped=pd.DataFrame(skipped, columns=["unique_id", "fold", "reason"]),
        timings=timings,
        settings=settings,
        attention=attention_frame(*last, columns.id, columns.time, tz, True, fitted.state_.network.values),
        data=frame,
        last_model=fitted,
        quantile_metrics=quantile_metrics,
    )


# statsforecast's ETS refuses a series of at most (parameters + 4) periods; its simplest model has 2 (alpha, l0).
AUTO_ETS_MIN_PERIODS = 7


def min_train_periods(horizon: int, season: int, baselines) -> tuple[int, str]:
    """The history a series needs up to a cutoff to be scored in that fold, and why (for the skip reasons).

    Every model is scored on the same windows: a fold needs a horizon plus one period of history, a full
    season where the seasonal-naive baseline runs (it has no forecast from less) and ``AUTO_ETS_MIN_PERIODS``
    where AutoETS runs (statsforecast refuses fewer: "tiny datasets"); shorter series are skipped.
    """
    needs = [(horizon + 1, "")]
    if "seasonal_naive" in baselines:
        needs.append((season, ": one season, for the seasonal-naive baseline"))
    if "auto_ets" in baselines:
        needs.append((AUTO_ETS_MIN_PERIODS, f": {AUTO_ETS_MIN_PERIODS} periods, the fewest AutoETS fits"))
    return max(needs, key=lambda need: need[0])


def backtest_timings(seconds: dict, baselines) -> pd.DataFrame:
    """Seconds per model: ``seconds`` holds ``fit`` and ``predict`` for the model and one entry per baseline."""
    return pd.DataFrame(
        [
            {"model": MODEL_NAME, "fit_seconds": seconds.get("fit", 0.0), "predict_seconds": seconds.get("predict", 0.0)},
            *[{"model": b, "fit_seconds": seconds.get(b, 0.0), "predict_seconds": 0.0} for b in baselines],
        ]
    )


def backtest_settings(
    model, fitted, folds: list[Fold], offset, season: int, step: int, refit, window: str, baselines, n_series: int, n_rows: int
) -> dict:
    """The settings a backtest reports (each path adds its own: jobs, the occlusion check, the seconds)."""
    return {
        "n_series": int(n_series),
        "n_rows": int(n_rows),
        "freq": offset.freqstr,
        "season_length": season,
        "horizon": model.horizon,
        "n_windows": len(folds),
        "step_size": step,
        "refit": refit,
        "window": window,
        "baselines": list(baselines),
        "cutoffs": [_describe_cutoffs(f.cutoffs) for f in folds],
        "model_params": model.get_params(),
        "blend_weights": fitted._blend_weights(),
    }


def scored_forecasts(
    predictions: list[pd.DataFrame],
    baseline_frames: list[pd.DataFrame | None],
    scales: list[pd.DataFrame],
    frame: pd.DataFrame,
    columns: Columns,
    model: Seq2SeqForecaster,
    baselines: tuple[str, ...],
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The forecasts of every model beside the actuals, their metrics per window, and their quantile scores.

    ``predictions`` and ``scales`` are the model's labelled forecasts and MASE scales, fold by fold;
    ``frame`` holds the actuals. A Dask backtest calls this on each partition's folds.
    """
    keys = [columns.id, "cutoff", columns.time]
    forecasts = pd.concat(predictions, ignore_index=True)
    baseline_frames = [b for b in baseline_frames if b is not None]
    if baseline_frames:
        forecasts = forecasts.merge(pd.concat(baseline_frames, ignore_index=True), on=keys, how="left")
    actual = frame[[columns.id, columns.time, columns.target]].rename(columns={columns.target: "y"})
    forecasts = forecasts.merge(actual, on=[columns.id, columns.time], how="left")
    rest = [c for c in forecasts.columns if c not in (*keys, "y")]
    forecasts = forecasts[[*keys, "y", *rest]].rename(columns={columns.id: "unique_id", columns.time: "ds"})
    scale_frame = pd.concat(scales, ignore_index=True)
    models = [MODEL_NAME, *baselines]
    metrics = score_forecasts(forecasts, scale_frame, models, _interval_columns(model, baselines))
    return forecasts, metrics, score_quantiles(forecasts, _quantile_columns(model, baselines))


# Series in the sample of the last fold on which a backtest checks that attention is faithful.
OCCLUSION_SAMPLE = 50


def _occlusion_at_last_fold(fitted: Seq2SeqForecaster, train: pd.DataFrame, future, columns: Columns, report) -> dict:
    """The occlusion check (``evaluation.faithfulness``) of the maps, and of the shares where there are any, on a fixed
    sample of the last fold's series."""
    report.step("occlusion check of the attention maps and the shares")
    rankings = RANKINGS if fitted._accountable() else ("weight",)
    results = occlusions(fitted, train, future, max_series=OCCLUSION_SAMPLE, rank_by=rankings)
    maps = results["weight"]
    check = {"ratio": maps.ratio, "most": maps.most_attended, "least": maps.least_attended, "n_series": maps.n_series}
    if "contribution" in results:
        check["share_ratio"] = results["contribution"].ratio
    return check


def check_backtest_arguments(n_windows, step_size, refit, baselines, season_length=None, n_jobs=1) -> int:
    """Refuse malformed backtest arguments with a message naming them; returns the refit period (0: never).

    ``season_length`` (None or a positive integer) and ``n_jobs`` (a positive integer) are checked as the
    estimator checks its own: a flag, a fraction, zero or a word is refused, never read as something else.
    """
    checked = (("n_windows", n_windows, False), ("step_size", step_size, True), ("season_length", season_length, True))
    for name, value, optional in (*checked, ("n_jobs", n_jobs, False)):
        if optional and value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 1 <= value <= MAX_STEPS:
            raise ValueError(
                f"`{name}` must be a positive integer up to {MAX_STEPS:,}{' or None' if optional else ''}; got {value!r}."
            )
    if isinstance(baselines, str) or not all(isinstance(b, str) for b in baselines):
        raise ValueError(f"`baselines` must be a tuple of names such as ('seasonal_naive', 'auto_ets'); got {baselines!r}.")
    unknown = [b for b in baselines if b not in BASELINES]
    if unknown:
        raise ValueError(f"Unknown baseline(s) {unknown}; choose from {BASELINES}.")
    if isinstance(refit, bool) or (isinstance(refit, numbers.Integral) and refit >= 1):
        return int(refit)
    raise ValueError(f"`refit` must be True, False or a positive int; got {refit!r}.")


def _panel(fitted: Seq2SeqForecaster, frame: pd.DataFrame, columns: Columns) -> Panel:
    """A validated frame as a panel for a fitted model (no second validation)."""
    state = fitted.state_
    offset = normalise_freq(state.freq)
    return model_panel(
        frame, columns, state.roles, state.features, offset, fitted.horizon, state_units(state), None, fitted.fill_gaps
    )


def _history_only(frame: pd.DataFrame, folds: list[Fold], columns: Columns) -> pd.DataFrame:
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


def _scored_ids(folds: list[Fold]) -> pd.Index:
    return pd.Index(sorted({uid for fold in folds for uid in fold.cutoffs.index}, key=str))


def _fold_windows(panel: Panel, folds: list[Fold]) -> tuple[np.ndarray, np.ndarray]:
    """Every (series row, origin column) of every fold in one panel, fold by fold."""
    ids = pd.Index(panel.ids)
    series, origins = [], []
    for fold in folds:
        rows = ids.get_indexer(fold.cutoffs.index)
        position = panel.grid.get_indexer(pd.DatetimeIndex(fold.cutoffs.to_numpy()))
        if (rows < 0).any() or (position < 0).any():
            raise ValueError(f"Fold {fold.index}: a scored series or cutoff is not in the panel; please report this.")
        series.append(rows)
        origins.append(panel.last_col - (panel.end[rows] - position))
    return np.concatenate(series), np.concatenate(origins)


def _scales(panel: Panel, forecast: Forecast, fitted: Seq2SeqForecaster, season: int) -> pd.DataFrame:
    """The MASE scale of each window (``unique_id``, ``cutoff``, ``scale``) from its series' history up to its origin."""
    table = naive_error_table(target_values(panel, fitted.state_), season, panel.first_col)
    return pd.DataFrame(
        {
            "unique_id": panel.ids[forecast.series],
            "cutoff": panel.timestamps(forecast.series, forecast.origins),
            "scale": mase_scale(table, forecast.series, forecast.origins),
        }
    )


def _baselines(
    train,
    fold,
    horizon,
    offset,
    season,
    baselines,
    n_jobs,
    columns: Columns,
    seconds: dict,
    quantiles=(),
    report=None,
    client=None,
):
    """The fold's statsforecast forecasts, one baseline at a time so that each one's time is its own.

    With an active Dask client, each baseline runs on its workers, one group of whole series per task
    (``forecaster.scale.dask_baselines``); the forecasts are the same.
    """
    from ..scale.dask_baselines import cluster_baselines

    frames = []
    for name in baselines:
        if report is not None:
            report.step(f"baseline {name}" + (" on the Dask cluster" if client is not None else ""))
        tick = time.perf_counter()
        kwargs = dict(time_col=columns.time, target_col=columns.target, quantiles=quantiles)
        arguments = dict(horizon=horizon, freq=offset.freqstr, season_length=season, names=(name,), **kwargs)
        if client is not None:
            base = cluster_baselines(client, train, columns.id, **arguments)
        else:
            base = run_baselines(train, n_jobs=n_jobs, id_col=columns.id, **arguments)
        frames.append(base.set_index([columns.id, columns.time]))
        seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - tick
    if not frames:
        return None
    base = pd.concat(frames, axis=1).reset_index()
    return base.assign(cutoff=base[columns.id].map(fold.cutoffs))


def with_zone(times: pd.Series, tz: str) -> pd.Series:
    """Naive timestamps (as the backtest works on them) back in the caller's zone (``validation.restore_zone``)."""
    return pd.Series(restore_zone(pd.DatetimeIndex(times), tz), index=times.index, name=times.name)


def in_zone(forecasts: pd.DataFrame, *scores: pd.DataFrame, tz: str) -> tuple[pd.DataFrame, ...]:
    """``scored_forecasts``' frames with their ``ds`` and ``cutoff`` columns (where they have them) in the caller's zone."""
    return tuple(
        frame.assign(**{c: with_zone(frame[c], tz) for c in ("ds", "cutoff") if c in frame}) for frame in (forecasts, *scores)
    )


def _describe_cutoffs(cutoffs: pd.Series) -> str:
    low, high = cutoffs.min(), cutoffs.max()
    return str(low.date() if low == low.normalize() else low) + ("" if low == high else f" .. {high}")


def _interval_columns(model: Seq2SeqForecaster, baselines) -> dict[str, tuple[str, str]]:
    """Each model's (lower, upper) columns for ``coverage``: the model's outermost quantiles for every model.

    The baselines are scored on the same interval as the model (their quantiles at its levels), so the
    coverage column compares like with like; without model quantiles, their 80% interval.
    """
    intervals = {b: (f"{b}_lo", f"{b}_hi") for b in baselines}
    if model.quantiles is not None and len(model.quantiles) >= 2:
        names = _quantile_renames(model)
        lo, hi = float(min(model.quantiles)), float(max(model.quantiles))
        intervals[MODEL_NAME] = (names[quantile_column(lo)], names[quantile_column(hi)])
        columns = _quantile_columns(model, baselines)
        intervals |= {b: (columns[b][lo], columns[b][hi]) for b in baselines}
    return intervals


def _quantile_columns(model: Seq2SeqForecaster, baselines) -> dict[str, dict[float, str]]:
    """Each model's forecast column per quantile level: the model's levels, for the model and every baseline."""
    levels = [] if model.quantiles is None else sorted({float(q) for q in model.quantiles} | {0.5})
    if len(levels) < 2:
        return {}
    return quantile_columns([MODEL_NAME, *baselines], levels)


def _quantile_renames(model: Seq2SeqForecaster) -> dict[str, str]:
    names = {"y_hat": MODEL_NAME}
    for q in () if model.quantiles is None else model.quantiles:
        column = quantile_column(float(q))
        names[column] = MODEL_NAME + column[len("y_hat") :]
    return names


def _label(panel: Panel, forecast: Forecast, fitted: Seq2SeqForecaster, model: Seq2SeqForecaster) -> pd.DataFrame:
    """Forecast rows of the core's windows, with their cutoff and the model's column names."""
    state = fitted.state_
    out = forecast_frame(panel, forecast, state.quantiles, model.quantiles, model.id_col, model.time_col, None)
    cutoffs = panel.timestamps(forecast.series, forecast.origins)
    out.insert(1, "cutoff", np.repeat(cutoffs, forecast.quantiles.shape[1]))
    return out.rename(columns=_quantile_renames(model))
