"""``fit`` on a Dask DataFrame: training windows of every series, drawn on the workers, streamed to the client.

The frame never reaches the client. ``fit_dask``:

1. reads the frequency from a few hundred series of the first partition (or takes ``freq``);
2. reads every partition once on the workers (:func:`~forecaster.scale.window_stream.partition_facts`):
   validates it as ``fit`` validates a frame (bad values, timestamps off the frequency, gaps, series shorter
   than one horizon), counts its training windows, and gathers the covariate statistics, which merge into
   the encodings a pandas fit learns from the whole frame;
3. collects a sample of whole series holding about ``ANCHOR_WINDOWS`` training windows (a hash of the id
   picks them, so the sample is the same on every run): the client fits on it what needs the series
   themselves: the validation windows of early stopping, the held-out windows that calibrate the intervals
   and choose the partners' blend, and the history tail that ``predict()`` without ``df`` forecasts;
4. trains the network on windows drawn uniformly from the whole panel's training windows on the workers,
   round after round (:class:`~forecaster.scale.window_stream.WindowStream`), with the step budget of the
   whole panel's window count, the fit's own encodings, and its held-out tails left out (every series'
   under early stopping, as in a pandas fit; the sample's held-out series' otherwise).

A panel with at most ``ANCHOR_WINDOWS`` windows is fitted whole, as ``fit(df.compute())`` would be.

``fraction`` keeps the earlier, simpler mode: fit on a share of the series only (the pandas ``fit`` of that
sample, with its own budget and encodings), for a quick model on a subset.

The partitions must each hold whole series. A frame indexed by the id with known divisions (Parquet files
sorted by id, read with ``index=id_col, calculate_divisions=True``) whose partitions do is read where it lies,
once per round for the partitions drawn; any other frame is shuffled by series once and kept on the workers
(``persist``).
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import replace

import dask
import numpy as np
import pandas as pd

from ..callers import user_stacklevel
from ..data.features import merge_features
from ..data.frequency import infer_offset, normalise_freq
from ..data.validation import Columns, clean_history, columns_and_roles
from ..data.zero_tallies import merge_zero_tallies
from ..engines import is_dask_frame
from ..model.fitting import minimum_history
from ..model.members import TrainingJob
from ..model.params import check_params
from ..model.resolve import resolve_units
from .dask_frames import head_rows
from .window_stream import StreamPlan, partition_facts, series_windows, stream_trainer

__all__ = ["fit_dask", "fit_whole_series", "in_sample"]

# Training windows of the client's sample of series (about 900 series of 120 months). The sample gives
# the validation and held-out windows and the history tail; the network trains on every series.
ANCHOR_WINDOWS = 100_000


def in_sample(ids: pd.Series, fraction: float) -> np.ndarray:
    """Whether each row's series is in the sample: a hash of its id as text (fixed key) below ``fraction`` of 2^64."""
    if fraction >= 1.0:
        return np.ones(len(ids), dtype=bool)
    text = ids.astype(str).to_numpy(dtype=object)
    return pd.util.hash_array(text) < np.uint64(min(fraction, 1.0) * 2.0**64)


def _keep(part: pd.DataFrame, id_col: str, fraction: float) -> pd.DataFrame:
    return part.loc[in_sample(part[id_col], fraction)]


def _sample(frame, id_col: str, fraction: float) -> pd.DataFrame:
    """The rows of the series in the sample, filtered on the workers; only they reach the client."""
    return frame.map_partitions(_keep, id_col, fraction, meta=frame._meta).compute()


def by_whole_series(df, id_col: str):
    """(``df`` with whole series in every partition, the same with the id as a column).

    An id-indexed frame whose partitions already hold whole series is kept as it lies; any other is shuffled
    by series once and persisted (on the workers, with a distributed client), so that each round reads its
    partitions without shuffling again.
    """
    from .dask_frames import by_series, flat, indexed_by_series, whole_series

    if df.index.name == id_col and id_col not in df.columns:
        if indexed_by_series(df, id_col) and whole_series(df):
            return df, flat(df)
        df = flat(df)
    if id_col not in df.columns:
        raise ValueError(f"`df` lacks column(s) {[id_col]}.")
    shuffled = by_series(df, id_col, df.npartitions).persist()
    return shuffled, shuffled


def _plan(model, offset: pd.DateOffset, job: TrainingJob) -> StreamPlan:
    units = resolve_units(model.get_params(), offset)
    keys = ("input_size", "season_length", "log_target", "seasonal_profile", "trend_line")
    return StreamPlan(
        columns=Columns.from_params(model.get_params()),
        roles=job.roles,
        features=job.features,
        freq=offset.freqstr,
        horizon=job.network.horizon,
        units={key: units[key] for key in keys},
        fill_gaps=model.fill_gaps,
        input_size=job.network.input_size,
        min_history=minimum_history(job.network.input_size, job.network.horizon),
        scaler=job.scaler,
        weigh_by_naive_error=job.naive_table is not None,
        cut_every=0,
        cuts={},
    )


def _offset(model, frame: pd.DataFrame) -> pd.DateOffset:
    columns = Columns.from_params(model.get_params())
    return normalise_freq(model.freq) if model.freq is not None else infer_offset(frame[columns.time], frame[columns.id])


def _client_sample(rows, columns, fraction: float, horizon: int, min_history: int) -> pd.DataFrame:
    """The sample's rows. A share that would keep no series with a training window (a panel of few, long series)
    is doubled until one is kept (each try reads the frame once)."""
    while True:
        sample = _sample(rows, columns.id, fraction)
        sizes = sample.groupby(columns.id, sort=False, observed=True)[columns.time].size().to_numpy()
        if series_windows(sizes, horizon, min_history).any() or fraction >= 1.0:
            return sample
        fraction = min(2.0 * fraction, 1.0)


def fit_dask(model, df, fraction: float | None = None):
    """Fit ``model`` on the Dask DataFrame ``df``; returns ``model``.

    Args:
        fraction: None (the default) trains on windows of every series, streamed from the workers; a share
            in (0, 1] fits a sample of that share of the series instead (by a hash of the id).

    Raises:
        TypeError: ``df`` is not a Dask DataFrame.
        ValueError: ``fraction`` is not in (0, 1], ``df`` lacks the id column, a partition holds bad rows
            (named as ``fit`` names them), or a share given as ``fraction`` keeps no series.
    """
    if not is_dask_frame(df):
        raise TypeError(f"`df` must be a Dask DataFrame; got {type(df).__name__}.")
    number = isinstance(fraction, int | float) and not isinstance(fraction, bool)
    if fraction is not None and not (number and 0.0 < fraction <= 1.0):
        raise ValueError(f"`fraction` must be in (0, 1], got {fraction!r}.")
    id_col = model.id_col
    if fraction is not None:
        return _fit_share(model, df, fraction)
    frame, rows = by_whole_series(df, id_col)
    return fit_whole_series(model, frame, rows)


def fit_whole_series(model, frame, rows=None, quiet: bool = False):
    """``fit_dask`` of a Dask DataFrame whose partitions each hold whole series; returns ``model``.

    ``rows``: the same frame with the id as a column (default: ``frame`` itself). ``quiet``: no warning
    about the series the client kept (a backtest forecasts every series from its own data).
    """
    columns, roles = columns_and_roles(model.get_params())
    id_col, rows = columns.id, frame if rows is None else rows
    check_params(model.get_params())
    offset = _offset(model, head_rows(rows, columns, roles))
    min_history = minimum_history(resolve_units(model.get_params(), offset)["input_size"], model.horizon)
    parts = frame.to_delayed()
    count = dask.delayed(partition_facts)
    arguments = (columns, roles, offset.freqstr, model.horizon, min_history, model.fill_gaps)
    facts = dask.compute(*[count(part, *arguments) for part in parts])
    windows = [f.windows for f in facts]
    total = sum(windows)
    if total <= ANCHOR_WINDOWS:
        return model.fit(rows.compute())  # few windows: the whole panel, exactly as a pandas fit
    sample = _client_sample(rows, columns, ANCHOR_WINDOWS / total, model.horizon, min_history)
    sample, tz = clean_history(sample, columns, roles)
    # The whole panel's encodings and closure tallies: the fit reads a sample of its series.
    features = replace(merge_features([f.features for f in facts]), zero_tallies=merge_zero_tallies([f.zeros for f in facts]))
    trainer = stream_trainer(parts, windows, functools.partial(_plan, model, offset))
    model.fit_frame(sample, tz, trainer, features, n_windows=total, offset=offset)
    if not quiet:
        n_series, kept = sum(f.series for f in facts), sample[id_col].nunique()
        warnings.warn(
            f"`fit` on a Dask DataFrame trained on windows of all {n_series} series, drawn on the workers; the client "
            f"kept {kept} of them for validation and calibration (docs/scale.md). `predict()` without `df` forecasts "
            "those series only: pass `df` to forecast all.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
    return model


def _fit_share(model, df, fraction: float):
    """The pandas ``fit`` of the series in a sample of ``fraction`` of them."""
    id_col = model.id_col
    if df.index.name == id_col and id_col not in df.columns:
        from .dask_frames import flat

        df = flat(df)
    if id_col not in df.columns:
        raise ValueError(f"`df` lacks column(s) {[id_col]}.")
    sample = _sample(df, id_col, fraction)
    if sample.empty:
        raise ValueError(f"No series of `df` falls in a sample of fraction {fraction:g}; raise `fraction`.")
    if fraction < 1.0:
        warnings.warn(
            f"`fit` on a Dask DataFrame trained on {sample[id_col].nunique()} sampled series (a share of {fraction:.3g}). "
            "`predict()` without `df` forecasts those series only: pass `df` to forecast all.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
    return model.fit(sample)
