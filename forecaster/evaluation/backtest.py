"""Rolling-origin backtest of a Seq2SeqForecaster against statsforecast baselines."""

from __future__ import annotations

import reprlib
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import clone
from tqdm.auto import tqdm

from ..data.frequency import infer_offset, normalise_freq, season_length_for
from ..data.roles import CovariateRoles, LeakageError
from ..data.validation import Columns, clean_history
from ..estimator import Seq2SeqForecaster, quantile_column
from .baselines import run_baselines
from .metrics import score_forecasts, seasonal_scales
from .splits import Fold, rolling_origins

MODEL_NAME = "seq2seq"


@dataclass
class BacktestResult:
    """Everything a backtest produced.

    Attributes:
        forecasts: ``unique_id``, ``cutoff``, ``ds``, ``y`` and one column per model
            (plus ``seq2seq_q..`` quantiles and baseline ``_lo``/``_hi`` bounds).
        metrics: per (series, cutoff, model): ``mase``, ``smape``, ``coverage``, the MASE
            ``scale`` and ``zero_scale`` (MASE undefined, excluded from means).
        skipped: series left out of a fold, with the reason.
        timings: seconds spent fitting and predicting, per model.
        settings: the backtest's settings, for the report.
        attention: ``explain(include_padding=True)`` of the last fold's model from its origins.
        data: the validated input frame (for plots).
    """

    forecasts: pd.DataFrame
    metrics: pd.DataFrame
    skipped: pd.DataFrame
    timings: pd.DataFrame
    settings: dict
    attention: pd.DataFrame | None = None
    data: pd.DataFrame | None = field(default=None, repr=False)
    last_model: Seq2SeqForecaster | None = field(default=None, repr=False)

    @property
    def models(self) -> list[str]:
        return list(dict.fromkeys(self.metrics["model"]))

    def summary(self) -> pd.DataFrame:
        """Per model: mean/median MASE, MASE relative to each baseline, win rate, coverage, sMAPE, seconds."""
        return summarise(self.metrics, self.timings, self.models)

    def to_report(self, path: str | Path, title: str | None = None) -> Path:
        """Write Markdown, self-contained HTML, CSVs and PNG plots to directory ``path``."""
        from .report import write_report

        return write_report(self, Path(path), title=title)


def summarise(metrics: pd.DataFrame, timings: pd.DataFrame, models: list[str]) -> pd.DataFrame:
    """The summary table of :meth:`BacktestResult.summary`."""
    wide = metrics.pivot_table(index=["unique_id", "cutoff"], columns="model", values="mase", dropna=False)
    scored = wide.dropna()
    best = scored.idxmin(axis=1) if len(scored) else pd.Series(dtype=object)
    rows = []
    for model in models:
        part = metrics[metrics["model"] == model]
        row = {
            "model": model,
            "mean_mase": part["mase"].mean(),
            "median_mase": part["mase"].median(),
            "mean_smape": part["smape"].mean(),
            "n_scored": int(part["mase"].notna().sum()),
            "n_zero_scale": int(part["zero_scale"].sum()),
            "win_rate": float((best == model).mean()) if len(best) else np.nan,
        }
        for baseline in ("seasonal_naive", "auto_ets"):
            if baseline in scored.columns and model in scored.columns:
                row[f"rel_mase_vs_{baseline}"] = scored[model].mean() / scored[baseline].mean()
        if "coverage" in part:
            row["coverage"] = part["coverage"].mean()
        rows.append(row)
    table = pd.DataFrame(rows).set_index("model")
    return table.join(timings.set_index("model"), how="left")


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
    columns, roles = model._columns(), model._roles()
    data = df
    if future_covariates_df is not None:
        extra = [c for c in roles.future if c in future_covariates_df.columns and c not in df.columns]
        data = df.merge(future_covariates_df[[columns.id, columns.time, *extra]], on=[columns.id, columns.time], how="left")
    frame, _ = clean_history(data, columns, roles)
    return frame, columns, roles


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
    scored in one batched predict). ``window="sliding"`` keeps the first fold's history
    length in every fold. MASE scales come from each fold's training data. ``n_jobs``
    parallelises the statsforecast baselines.
    """
    if not isinstance(model, Seq2SeqForecaster):
        raise TypeError(f"`model` must be a Seq2SeqForecaster; got {type(model).__name__}.")
    if window not in ("expanding", "sliding"):
        raise ValueError(f"`window` must be 'expanding' or 'sliding'; got {window!r}.")
    if isinstance(refit, bool) or (isinstance(refit, int) and refit >= 1):
        refit_every = int(refit)
    else:
        raise ValueError(f"`refit` must be True, False or a positive int; got {refit!r}.")
    started = time.perf_counter()
    frame, columns, roles = _prepare(model, df, future_covariates_df)
    offset = normalise_freq(model.freq) if model.freq else infer_offset(frame[columns.time], frame[columns.id])
    season = int(season_length or model.season_length or season_length_for(offset))
    horizon, step = model.horizon, step_size or model.horizon
    grouped = frame.groupby(columns.id, sort=False)[columns.time]
    folds = rolling_origins(grouped.max(), grouped.min(), offset, horizon, n_windows, step, horizon + 1, window == "sliding")
    _check_not_fitted_past(model, folds[0])
    template = clone(model).set_params(freq=offset.freqstr)

    predictions, baseline_frames, scales, skipped = [], [], [], []
    seconds = {"fit": 0.0, "predict": 0.0}
    fitted, train, future = None, None, None
    for fold in tqdm(folds, desc="backtest folds", disable=not progress):
        train, future = fold_data(frame, fold, columns, roles)
        guard_fold(train, future, fold, columns, roles)
        skipped += [{"unique_id": uid, "fold": fold.index, "reason": why} for uid, why in fold.skipped.items()]
        if fitted is None or (refit_every and fold.index % refit_every == 0):
            tick = time.perf_counter()
            fitted = clone(template).fit(train)
            seconds["fit"] += time.perf_counter() - tick
        if refit_every:
            tick = time.perf_counter()
            predictions.append(_label(fitted.predict(df=train, future_df=future), fold.cutoffs, columns, model))
            seconds["predict"] += time.perf_counter() - tick
        fold_baselines = []
        for name in baselines:  # one at a time, so each baseline's time is its own
            tick = time.perf_counter()
            kwargs = dict(n_jobs=n_jobs, id_col=columns.id, time_col=columns.time, target_col=columns.target)
            base = run_baselines(train, horizon, offset.freqstr, season, (name,), **kwargs)
            fold_baselines.append(base.set_index([columns.id, columns.time]))
            seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - tick
        if fold_baselines:
            base = pd.concat(fold_baselines, axis=1).reset_index()
            baseline_frames.append(base.assign(cutoff=base[columns.id].map(fold.cutoffs)))
        fold_scales = seasonal_scales(train, season, columns.id, columns.target).reset_index()
        scales.append(fold_scales.assign(cutoff=fold_scales[columns.id].map(fold.cutoffs)))
    if not refit_every:
        tick = time.perf_counter()
        predictions = [_predict_all_origins(fitted, frame, folds, columns, roles, model)]
        seconds["predict"] += time.perf_counter() - tick

    keys = [columns.id, "cutoff", columns.time]
    forecasts = pd.concat(predictions, ignore_index=True)
    if baseline_frames:
        forecasts = forecasts.merge(pd.concat(baseline_frames, ignore_index=True), on=keys, how="left")
    actual = frame[[columns.id, columns.time, columns.target]].rename(columns={columns.target: "y"})
    forecasts = forecasts.merge(actual, on=[columns.id, columns.time], how="left")
    rest = [c for c in forecasts.columns if c not in (*keys, "y")]
    forecasts = forecasts[[*keys, "y", *rest]].rename(columns={columns.id: "unique_id", columns.time: "ds"})
    scale_frame = pd.concat(scales, ignore_index=True).rename(columns={columns.id: "unique_id"})
    models = [MODEL_NAME, *baselines]
    metrics = score_forecasts(forecasts, scale_frame, models, _interval_columns(model, baselines))
    timings = pd.DataFrame(
        [
            {"model": MODEL_NAME, "fit_seconds": seconds["fit"], "predict_seconds": seconds["predict"]},
            *[{"model": b, "fit_seconds": seconds[b], "predict_seconds": 0.0} for b in baselines],
        ]
    )
    settings = {
        "n_series": int(frame[columns.id].nunique()),
        "n_rows": int(len(frame)),
        "freq": offset.freqstr,
        "season_length": season,
        "horizon": horizon,
        "n_windows": n_windows,
        "step_size": step,
        "refit": refit,
        "window": window,
        "baselines": list(baselines),
        "n_jobs": n_jobs,
        "cutoffs": [_describe_cutoffs(f.cutoffs) for f in folds],
        "model_params": model.get_params(),
        "blend_weights": fitted._blend_weights(),
        "seconds": time.perf_counter() - started,
    }
    return BacktestResult(
        forecasts=forecasts,
        metrics=metrics,
        skipped=pd.DataFrame(skipped, columns=["unique_id", "fold", "reason"]),
        timings=timings,
        settings=settings,
        attention=fitted.explain(df=train, future_df=future, include_padding=True),
        data=frame,
        last_model=fitted,
    )


def _describe_cutoffs(cutoffs: pd.Series) -> str:
    low, high = cutoffs.min(), cutoffs.max()
    return str(low.date() if low == low.normalize() else low) + ("" if low == high else f" .. {high}")


def _interval_columns(model: Seq2SeqForecaster, baselines) -> dict[str, tuple[str, str]]:
    intervals = {b: (f"{b}_lo", f"{b}_hi") for b in baselines}
    if model.quantiles and len(model.quantiles) >= 2:
        names = _quantile_renames(model)
        lo, hi = min(model.quantiles), max(model.quantiles)
        intervals[MODEL_NAME] = (names[quantile_column(float(lo))], names[quantile_column(float(hi))])
    return intervals


def _quantile_renames(model: Seq2SeqForecaster) -> dict[str, str]:
    names = {"y_hat": MODEL_NAME}
    for q in model.quantiles or ():
        column = quantile_column(float(q))
        names[column] = MODEL_NAME + column[len("y_hat") :]
    return names


def _label(forecast: pd.DataFrame, cutoffs: pd.Series, columns: Columns, model: Seq2SeqForecaster) -> pd.DataFrame:
    out = forecast.rename(columns=_quantile_renames(model))
    out.insert(1, "cutoff", out[columns.id].map(cutoffs))
    return out


def _predict_all_origins(fitted, frame, folds, columns: Columns, roles: CovariateRoles, model) -> pd.DataFrame:
    """refit=False: one batched predict over every (series, fold) origin, each as its own pseudo-series."""
    histories, futures, lookups = [], [], []
    for fold in folds:
        train, future = fold_data(frame, fold, columns, roles)
        pseudo = pd.Series([f"{fold.index}|{i}" for i in range(len(fold.cutoffs))], index=fold.cutoffs.index)
        lookups.append(pd.DataFrame({columns.id: fold.cutoffs.index, "cutoff": fold.cutoffs.to_numpy()}, index=pseudo.to_numpy()))
        histories.append(train.assign(**{columns.id: train[columns.id].map(pseudo)}))
        if future is not None:
            futures.append(future.assign(**{columns.id: future[columns.id].map(pseudo)}))
    forecast = fitted.predict(
        df=pd.concat(histories, ignore_index=True), future_df=pd.concat(futures, ignore_index=True) if futures else None
    )
    lookup = pd.concat(lookups)
    pseudo_ids = forecast[columns.id]
    forecast = forecast.assign(**{columns.id: pseudo_ids.map(lookup[columns.id])})
    forecast.insert(1, "cutoff", pseudo_ids.map(lookup["cutoff"]).to_numpy())
    return forecast.rename(columns=_quantile_renames(model))
