"""The fold plan of a backtest: cutoffs per series, the refit schedule, each fold's rows and the leakage guard.

Rolling origins are the only source of cutoffs. Every way of running the folds (``evaluation.executors``, and the
Dask paths of ``forecaster.scale``) takes its folds, their rows and its refits from here, so that each is written once.
"""

from __future__ import annotations

import reprlib
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.base import clone

from ..callers import user_stacklevel
from ..data.dates import shown_time
from ..data.frames import shown_id
from ..data.frequency import normalise_freq, season_length_for
from ..data.panel import Panel
from ..data.roles import CovariateRoles, LeakageError
from ..data.validation import Columns, columns_and_roles, when
from .horizon_rows import check_horizon_rows

# statsforecast's ETS refuses a series of at most (parameters + 4) periods; its simplest model has 2 (alpha, l0).
AUTO_ETS_MIN_PERIODS = 7


@dataclass(frozen=True)
class Fold:
    """One forecast origin per series.

    Attributes:
        index: fold number, 0 for the earliest origins.
        cutoffs: series id -> last timestamp the fold may see (for the series it scores).
        horizon_ends: series id -> last timestamp of the fold's forecast horizon.
        skipped: series id -> reason it is not scored in this fold.
        history_starts: series id -> first timestamp the fold may use (sliding window), or None.
    """

    index: int
    cutoffs: pd.Series
    horizon_ends: pd.Series
    skipped: dict
    history_starts: pd.Series | None = None

    @property
    def number(self) -> int:
        """The fold's number as users see it (``skipped.csv``, the report, errors): 1 for the earliest origins."""
        return self.index + 1


def series_spans(frame: pd.DataFrame, id_col: str, time_col: str, target_col: str) -> tuple[pd.Series, pd.Series]:
    """Each series' last timestamp and its first with an observed target: the span its folds are cut from.

    Leading rows without a target are no history: a fold whose cutoff falls among them would hand
    the model and the baselines nothing to forecast from, so they do not count toward ``min_train``.
    """
    ends = frame.groupby(id_col, sort=False, observed=True)[time_col].max()
    observed = frame[frame[target_col].notna()]
    starts = observed.groupby(id_col, sort=False, observed=True)[time_col].min().reindex(ends.index)
    return ends, starts.fillna(ends)


def rolling_origins(
    ends: pd.Series,
    starts: pd.Series,
    offset: pd.DateOffset,
    horizon: int,
    n_windows: int,
    step_size: int,
    min_train: int,
    sliding: bool = False,
    why: str = "",
    empty_ok: bool = False,
) -> list[Fold]:
    """``n_windows`` origins ``step_size`` periods apart per series, the last one ``horizon`` before its end.

    A series whose history up to a cutoff has fewer than ``min_train`` periods is skipped
    in that fold, with the reason recorded. With ``sliding``, every fold keeps the
    history length of the first fold (the window slides instead of expanding); a series too short
    to be scored in the first fold keeps ``min_train`` periods in the folds that score it. ``why``
    explains ``min_train`` in the skip reasons. ``empty_ok``: a fold that scores no series is kept
    (empty) instead of refused; a Dask backtest folds each partition on its own, after checking the whole panel.
    """
    if n_windows < 1 or step_size < 1:
        raise ValueError(f"`n_windows` and `step_size` must be positive; got {n_windows} and {step_size}.")
    furthest = horizon + (n_windows - 1) * step_size
    if not empty_ok:  # before any date is placed that far back (a thousand years before yearly data would overflow)
        check_windows_fit(longest_span(ends, starts, offset), horizon, n_windows, step_size, min_train, why)
    grid = pd.date_range(starts.min() - furthest * offset, ends.max(), freq=offset)
    start_pos = grid.get_indexer(pd.DatetimeIndex(starts.to_numpy()))
    end_pos = grid.get_indexer(pd.DatetimeIndex(ends.to_numpy()))
    folds = []
    for k in range(n_windows):
        cut_pos = end_pos - (horizon + (n_windows - 1 - k) * step_size)
        cutoffs = pd.Series(grid[cut_pos], index=ends.index, name="cutoff")
        periods = pd.Series(cut_pos - start_pos + 1, index=ends.index).clip(lower=0)
        short = (periods < min_train).to_numpy()
        if short.all() and not empty_ok:
            longest = int(periods.max())
            raise ValueError(
                f"Fold {k + 1} of {n_windows} leaves no series to score: its origins lie "
                f"{horizon + (n_windows - 1 - k) * step_size} periods before each series' end, and no series has "
                f"{min_train} periods up to its origin (the longest has {longest}). Lower `n_windows` or `step_size`."
            )
        skipped = {
            uid: f"only {n} periods up to cutoff {when(cut)} from its first observed target (needs {min_train}{why})"
            for uid, n, cut in zip(ends.index[short], periods[short], cutoffs[short], strict=False)
        }
        horizon_ends = pd.Series(grid[cut_pos + horizon], index=ends.index, name="horizon_end")
        history_starts = None
        if sliding:  # the first fold's history, or ``min_train`` periods for a series too short to be scored there
            first_cut = end_pos - (horizon + (n_windows - 1) * step_size)
            span = np.maximum(first_cut - start_pos, min_train - 1)
            history_starts = pd.Series(grid[np.maximum(cut_pos - span, 0)], index=ends.index)[~short]
        folds.append(Fold(k, cutoffs[~short], horizon_ends[~short], skipped, history_starts))
    return folds


def longest_span(ends: pd.Series, starts: pd.Series, offset: pd.DateOffset) -> int:
    """Periods of the longest series, from its first observed target to its end."""
    grid = pd.date_range(starts.min(), ends.max(), freq=offset)
    start_pos = grid.get_indexer(pd.DatetimeIndex(starts.to_numpy()))
    end_pos = grid.get_indexer(pd.DatetimeIndex(ends.to_numpy()))
    return int((end_pos - start_pos).max()) + 1


def windows_that_fit(longest: int, horizon: int, step_size: int, min_train: int) -> int:
    """How many rolling origins ``step_size`` apart leave the longest series ``min_train`` periods up to the first."""
    room = longest - horizon - min_train
    return 0 if room < 0 else room // step_size + 1


def check_windows_fit(longest: int, horizon: int, n_windows: int, step_size: int, min_train: int, why: str = "") -> None:
    """Refuse more windows than the longest series holds, saying how many fit.

    Raises:
        ValueError: naming ``n_windows``, ``step_size``, the longest series' periods and the windows that fit.
    """
    fit = windows_that_fit(longest, horizon, step_size, min_train)
    if n_windows <= fit:
        return
    furthest = horizon + (n_windows - 1) * step_size
    if fit:
        raise ValueError(
            f"`n_windows`={n_windows} with `step_size`={step_size} places the first origin {furthest} periods before "
            f"each series' end, with {min_train} periods of history up to it{why}; the longest series has {longest} "
            f"periods, so at most {fit} fit. Lower `n_windows` or `step_size`."
        )
    # Not even one window: the horizon and the history a fold needs are too long, whatever the spacing.
    seasonal = "seasonal-naive" in why
    fixes = (
        "`season_length`, or leave seasonal_naive out of `baselines`" if seasonal else "leave AutoETS and MSTL out of `baselines`"
    )
    raise ValueError(
        f"No backtest window fits: each needs `horizon`={horizon} periods after its origin and {min_train} periods of "
        f"history up to it{f' ({why[2:]})' if why else ''}, {horizon + min_train} in all, but the longest series has "
        f"{longest}. Lower `horizon`" + (f", or {fixes}." if why else ".")
    )


def min_train_periods(horizon: int, season: int, baselines) -> tuple[int, str]:
    """The history a series needs up to a cutoff to be scored in that fold, and why (for the skip reasons).

    Every model is scored on the same windows: a fold needs a horizon plus one period of history, a full
    season where the seasonal-naive baseline runs (it has no forecast from less) and ``AUTO_ETS_MIN_PERIODS``
    where AutoETS or MSTL (whose trend model is AutoETS) runs (statsforecast refuses fewer: "tiny datasets");
    shorter series are skipped.
    """
    needs = [(horizon + 1, "")]
    if "seasonal_naive" in baselines:
        needs.append((season, ": one season, for the seasonal-naive baseline"))
    if "auto_ets" in baselines:
        needs.append((AUTO_ETS_MIN_PERIODS, f": {AUTO_ETS_MIN_PERIODS} periods, the fewest AutoETS fits"))
    elif "mstl" in baselines:  # a series too short for any season gets MSTL's trend model, AutoETS, alone
        needs.append((AUTO_ETS_MIN_PERIODS, f": {AUTO_ETS_MIN_PERIODS} periods, the fewest MSTL's trend model (AutoETS) fits"))
    return max(needs, key=lambda need: need[0])


@dataclass(frozen=True)
class FoldPlan:
    """Everything that places a backtest's folds and runs its baselines, with no data in it (a Dask partition gets
    a copy and folds its own series exactly as the whole panel's folds do).

    Attributes:
        refit_every: fit a model at folds ``0, k, 2k, ...`` (0: once, on the first fold's rows).
        warm_start: a refit continues from the previous fold's model instead of a fresh clone.
        levels: the quantile levels the model forecasts, at which the baselines forecast too.
        offset: the calendar the cutoffs are placed on (None: ``freq``'s); an offset whose alias loses something
            (a business-day calendar with holidays) keeps it here.
    """

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
    refit_every: int = 1
    warm_start: bool = False
    offset: pd.DateOffset | None = None

    @property
    def one_pass(self) -> bool:
        """No refit and an expanding window: one panel of the whole frame serves every fold, in one forward pass."""
        return not self.refit_every and not self.sliding

    def refits(self, fold: Fold, fitted) -> bool:
        """Whether ``fold`` fits a model (the refit schedule): the first fold always, then every ``refit_every``."""
        return fitted is None or bool(self.refit_every and fold.index % self.refit_every == 0)

    def refit_from(self, fitted, template):
        """The model a refit trains: the previous fold's with ``warm_start``, else a fresh clone of ``template``."""
        return fitted if (fitted is not None and self.warm_start) else clone(template)

    @classmethod
    def for_model(
        cls, model, offset: pd.DateOffset, n_windows: int, step_size, refit_every: int, window: str, baselines, season_length
    ):
        """The plan of a backtest of ``model`` on data of frequency ``offset`` (arguments as ``backtest`` checked them)."""
        params = model.get_params()
        season = int(season_length or model.season_length or season_length_for(offset))
        horizon, step = model.horizon, model.horizon if step_size is None else step_size
        min_train, why = min_train_periods(horizon, season, baselines)
        levels = () if model.quantiles is None else tuple(model.quantiles)
        columns, roles = columns_and_roles(params)
        sliding = window == "sliding"
        options = (min_train, sliding, why, season, tuple(baselines), levels, refit_every, bool(model.warm_start), offset)
        return cls(columns, roles, offset.freqstr, horizon, n_windows, step, *options)

    def folds(self, ends: pd.Series, starts: pd.Series, empty_ok: bool = False) -> list[Fold]:
        """The folds of series that end at ``ends`` and start (first observed target) at ``starts``."""
        options = (self.horizon, self.n_windows, self.step, self.min_train, self.sliding, self.why)
        offset = self.offset if self.offset is not None else normalise_freq(self.freq)
        return rolling_origins(ends, starts, offset, *options, empty_ok=empty_ok)

    def folds_of(self, frame: pd.DataFrame) -> list[Fold]:
        """One partition's folds: its series' cutoffs depend on each series' own span only (empty folds kept)."""
        ends, starts = series_spans(frame, self.columns.id, self.columns.time, self.columns.target)
        return self.folds(ends, starts, empty_ok=True)

    def fold_rows(self, frame: pd.DataFrame, fold: Fold) -> tuple[pd.DataFrame, pd.DataFrame | None]:
        """The fold's training rows and its future-known covariates, refused if anything reaches past its cutoff."""
        train, future = fold_data(frame, fold, self.columns, self.roles, self.min_train)
        guard_fold(train, future, fold, self.columns, self.roles)
        if future is not None:
            check_horizon_rows(future, fold, self.columns, self.roles.future, self.horizon, self.offset or self.freq)
        return train, future


def fold_data(
    frame: pd.DataFrame, fold: Fold, columns: Columns, roles: CovariateRoles, min_train: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The fold's training rows (``ds <= cutoff``) and its future-known covariates for the horizon; a sliding window
    holds at least ``min_train`` rows from its first observed target (``_window_starts``)."""
    part = frame[frame[columns.id].isin(fold.cutoffs.index)]
    ids, times = part[columns.id], part[columns.time]
    cut = ids.map(fold.cutoffs)
    in_train = times <= cut
    if fold.history_starts is not None:
        in_train &= times >= ids.map(_window_starts(part, fold, columns, min_train))
    train = part.loc[in_train.to_numpy()]
    if not roles.future:
        return train, None
    in_horizon = (times > cut) & (times <= ids.map(fold.horizon_ends))
    return train, part.loc[in_horizon.to_numpy(), [columns.id, columns.time, *roles.future]]


def _window_starts(part: pd.DataFrame, fold: Fold, columns: Columns, min_train: int) -> pd.Series:
    """Each series' first timestamp in a sliding fold: its ``history_starts``, or, where that falls in a run of missing
    targets and leaves fewer than ``min_train`` rows from the first observed target to the cutoff (none, where the run
    reaches the cutoff), the last observed target before it. The model and the baselines read a series from its first
    observed target: such a window left a late-starting series fewer periods than the baselines need."""
    ids, times = part[columns.id], part[columns.time]
    starts = fold.history_starts
    start, cut = ids.map(starts), ids.map(fold.cutoffs)
    observed = part[columns.target].notna() & (times <= cut)
    first_inside = times.where(observed & (times >= start)).groupby(ids, observed=True).min().reindex(starts.index)
    last_before = times.where(observed & (times < start)).groupby(ids, observed=True).max().reindex(starts.index)
    held = ((times >= ids.map(first_inside)) & (times <= cut)).groupby(ids, observed=True).sum().reindex(starts.index)
    short = (first_inside.isna() | (first_inside > starts)) & (held < min_train) & last_before.notna()
    return starts.where(~short, last_before)


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
            f"Fold {fold.number}: series {shown_id(row[columns.id])} has training data at {row[columns.time]}, after its cutoff."
        )
    if future is None:
        return
    leaked = [c for c in (columns.target, *roles.past) if c in future.columns]
    if leaked:
        raise LeakageError(f"Fold {fold.number}: the future frame carries {leaked}.")
    cut = future[columns.id].map(fold.cutoffs).to_numpy()
    end = future[columns.id].map(fold.horizon_ends).to_numpy()
    times = future[columns.time].to_numpy()
    if ((times <= cut) | (times > end)).any():
        raise LeakageError(f"Fold {fold.number}: the future frame has rows outside the fold's horizon.")


def warn_ragged_cutoffs(folds: list[Fold], id_col: str) -> None:
    """Warn where a fold's series have different cutoffs (series that end at different times): each series is cut at its
    own, so a global model trained in the fold read other series' periods after an earlier series' cutoff."""
    spans = [(f, f.cutoffs.min(), f.cutoffs.max()) for f in folds if len(f.cutoffs)]
    ragged = [(f, low, high) for f, low, high in spans if low != high]
    if not ragged:
        return
    fold, low, high = ragged[-1]
    early = fold.cutoffs[fold.cutoffs < high]
    first = early.idxmin()  # the example is the series with the earliest cutoff, named with its own
    warnings.warn(
        f"Series end at different times, so each fold cuts each series at its own origin: in fold {fold.number}, "
        f"{len(early)} series (e.g. {shown_id(first)}, cutoff {when(shown_time(low, None))}) "
        f"{'is' if len(early) == 1 else 'are'} forecast by a model trained on other series up to "
        f"{when(shown_time(high, None))}. A global model learns shocks shared across "
        "series from those periods; the baselines and the MASE scales are not affected. For a backtest strict in "
        f"calendar time, cut the panel to the series' common end (every `{id_col}` ending at the same time).",
        UserWarning,
        stacklevel=user_stacklevel(),
    )


def fold_template(model, offset: pd.DateOffset, season_length: int | None):
    """The unfitted model every fold clones: ``model`` at the data's frequency. The backtest's ``season_length`` sets
    the baselines' season and the MASE scale only (the model's season decides its window and whether the shipped
    prior serves it, so the model scored is the one ``fit`` builds); where the two differ, a warning says so."""
    fitted_with = model.season_length or season_length_for(offset)
    if season_length is not None and season_length != fitted_with:
        where = "its own" if model.season_length else "the one its frequency gives"
        warnings.warn(
            f"backtest(season_length={season_length}) sets the baselines' season and the MASE scale; the model fits with "
            f"{where}, season_length={fitted_with}. Set it on the model to change the model's.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
    return clone(model).set_params(freq=offset.freqstr)


def check_not_fitted_past(model, first: Fold) -> None:
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


def check_origins(panel: Panel, series: np.ndarray, origins: np.ndarray, fold: Fold) -> None:
    """Every window's origin is its series' cutoff in ``fold``, or a clear error (a series without a row at its cutoff)."""
    stamps = pd.DatetimeIndex(panel.timestamps(series, origins))
    expected = pd.DatetimeIndex(fold.cutoffs.reindex(panel.ids[series]).to_numpy())
    wrong = np.flatnonzero(stamps != expected)
    if len(wrong):
        uid = panel.ids[series[wrong[0]]]
        raise ValueError(
            f"Fold {fold.number}: series {shown_id(uid)} has no row at its cutoff {when(expected[wrong[0]])} (its last "
            f"row before it is {when(stamps[wrong[0]])}). A refitted fold's history ends at each series' last row, which "
            "`fill_gaps` cannot extend: add that row with a missing target, so the fold forecasts from its cutoff."
        )
