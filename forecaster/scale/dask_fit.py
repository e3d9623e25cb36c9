"""``fit`` on a Dask DataFrame: on a sample of whole series, drawn on the workers and sized to the step budget.

Training never reads more than ``max_steps x batch_size`` windows (with the default budget, 1500 x 128 =
192,000 up to 250,000 windows, growing as their square root beyond: ``default_max_steps``), drawn at random
from the training windows. So the model is fitted on a sample of series holding ``SAMPLE_DRAWS`` times that
many windows (at most ``MAX_SAMPLE_WINDOWS``, which bounds the client's memory), with the whole panel's
budget: with the default cap, each window of the sample is then drawn about a quarter of a time, and about 88%
of the draws are windows not drawn before (against all of them on the full panel). Each series is kept or left
whole, by a hash of its id (as text), so the sample is the same on every run, and every worker filters its own
partitions: only the sample reaches the client, which fits it with the pandas ``fit``. A panel whose windows
are fewer than that is fitted whole.

The covariate scalers and static categories are then learnt from the sample; a series outside it is
forecast as any series unseen in training is.
"""

from __future__ import annotations

import warnings

import dask
import numpy as np
import pandas as pd

from ..model.params import default_max_steps
from .dispatch import is_dask_frame

__all__ = ["fit_dask", "sample_fraction", "in_sample"]

# Windows in the sample per window that training draws.
SAMPLE_DRAWS = 4
# The most windows a sample holds, whatever the budget: about 20,000 series of 120 months, which a client fits
# in about 1 GB. Past it (budgets above about 3,900 steps of 128), each window is drawn more than a quarter of a time.
MAX_SAMPLE_WINDOWS = 2_000_000


def estimated_windows(n_series: int, n_rows: int, horizon: int) -> float:
    """Training windows of a panel, estimated: a series of ``L`` rows gives about ``L - horizon``.

    Fewer for the first periods' history; the estimate only sizes the sample and the step budget.
    """
    return max(n_rows / max(n_series, 1) - horizon, 1.0) * n_series


def sample_fraction(n_series: int, n_rows: int, horizon: int, draws: int) -> float:
    """Share of the series to keep: ``SAMPLE_DRAWS x draws`` windows, at most ``MAX_SAMPLE_WINDOWS``, of the panel's."""
    if n_series <= 0:
        return 1.0
    wanted = min(SAMPLE_DRAWS * draws, MAX_SAMPLE_WINDOWS)
    return float(min(1.0, wanted / estimated_windows(n_series, n_rows, horizon)))


def in_sample(ids: pd.Series, fraction: float) -> np.ndarray:
    """Whether each row's series is in the sample: a hash of its id as text (fixed key) below ``fraction`` of 2^64."""
    if fraction >= 1.0:
        return np.ones(len(ids), dtype=bool)
    text = ids.astype(str).to_numpy(dtype=object)
    return pd.util.hash_array(text) < np.uint64(min(fraction, 1.0) * 2.0**64)


def _keep(part: pd.DataFrame, id_col: str, fraction: float) -> pd.DataFrame:
    return part.loc[in_sample(part[id_col], fraction)]


def fit_dask(model, df, fraction: float | None = None):
    """Fit ``model`` on a sample of the series of the Dask DataFrame ``df``; returns ``model``.

    Args:
        fraction: share of the series to keep (by a hash of the id); None sizes the sample to the step
            budget (``sample_fraction``), which keeps every series of a panel with few enough windows.

    Raises:
        TypeError: ``df`` is not a Dask DataFrame.
        ValueError: ``fraction`` is not in (0, 1], ``df`` lacks the id column, or the sample is empty.
    """
    if not is_dask_frame(df):
        raise TypeError(f"`df` must be a Dask DataFrame; got {type(df).__name__}.")
    number = isinstance(fraction, int | float) and not isinstance(fraction, bool)
    if fraction is not None and not (number and 0.0 < fraction <= 1.0):
        raise ValueError(f"`fraction` must be in (0, 1], got {fraction!r}.")
    id_col = model.id_col
    indexed = df.index.name == id_col and id_col not in df.columns  # indexed by series, as read from Parquet
    sized, counts = fraction is None, None
    if indexed:
        from .dask_frames import flat, indexed_by_series, partition_summary, whole_series

        if sized and indexed_by_series(df, id_col):  # whole series per partition: counted in the same read
            summary = partition_summary(df)
            if whole_series(df, summary):
                counts = int(summary["rows"].sum()), int(summary["series"].sum())
        df = flat(df)
    if id_col not in df.columns:
        raise ValueError(f"`df` lacks column(s) {[id_col]}.")
    if sized:
        n_rows, n_series = counts or (int(n) for n in dask.compute(df.shape[0], df[id_col].nunique()))
        steps = model.max_steps or default_max_steps(estimated_windows(n_series, n_rows, model.horizon), model.batch_size)
        fraction = sample_fraction(n_series, n_rows, model.horizon, steps * model.batch_size)
    sample = df.map_partitions(_keep, id_col, fraction, meta=df._meta).compute()
    if sample.empty:
        raise ValueError(f"No series of `df` falls in a sample of fraction {fraction:g}; raise `fraction`.")
    if fraction < 1.0:
        kept = sample[id_col].nunique()
        warnings.warn(
            f"`fit` on a Dask DataFrame trained on {kept} sampled series (a share of {fraction:.3g}, sized to the step "
            "budget; docs/scale.md). `predict()` without `df` forecasts those series only: pass `df` to forecast all.",
            UserWarning,
            stacklevel=3,
        )
    if not sized or fraction >= 1.0 or model.max_steps is not None or model.warm_start:
        return model.fit(sample)  # the whole panel, a share the caller chose, given steps, or a warm start's budget
    model.set_params(max_steps=steps)  # the whole panel's budget, not the sample's
    try:
        return model.fit(sample)
    finally:
        model.set_params(max_steps=None)
