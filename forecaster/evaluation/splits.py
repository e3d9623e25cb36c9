"""Rolling-origin folds: the only source of cutoffs in a backtest."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


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
            uid: f"only {n} periods up to cutoff {cut} from its first observed target (needs {min_train}{why})"
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
