"""The backtest's statsforecast baselines spread over the workers of an active Dask client.

Each baseline forecasts every series from that series alone, so the fold's training frame is split into
groups of whole series (by the hash that ``dask_frames`` partitions by) and each group is forecast by the
pandas ``run_baselines`` on a worker, with one statsforecast process each: the pieces are the rows of one
call on the whole frame. Only used when a ``distributed`` client is active in the calling process (one was
created, for example ``Client(LocalCluster(...))``); without one the backtest runs them in process.
"""

from __future__ import annotations

import functools

import pandas as pd

from ..evaluation.baselines import run_baselines

__all__ = ["cluster_baselines"]

# Groups of series per worker: a few, so a slow group (long series, AutoETS's harder fits) does not hold up the rest.
GROUPS_PER_WORKER = 4


def cluster_baselines(client, train: pd.DataFrame, id_col: str, **arguments) -> pd.DataFrame:
    """``run_baselines(train, **arguments)`` computed on the client's workers, one group of whole series per task."""
    from .dask_frames import series_partition

    workers = max(len(client.scheduler_info().get("workers", {})), 1)
    groups = GROUPS_PER_WORKER * workers
    keys = series_partition(train[id_col], groups)
    pieces = [train[keys == k] for k in range(groups) if (keys == k).any()]
    task = functools.partial(run_baselines, id_col=id_col, **arguments)
    futures = client.map(task, pieces, pure=False)
    return pd.concat(client.gather(futures), ignore_index=True)
