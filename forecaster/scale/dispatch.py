"""Recognising Dask DataFrames and an active Dask client without importing Dask, so that Dask stays optional."""

from __future__ import annotations

import sys


def is_dask_frame(obj: object) -> bool:
    """Whether ``obj`` is a Dask DataFrame.

    Whoever holds a Dask DataFrame has imported ``dask.dataframe``; when that module is not loaded,
    ``obj`` cannot be one, and nothing is imported to find out.
    """
    module = sys.modules.get("dask.dataframe")
    return module is not None and isinstance(obj, module.DataFrame)


def active_client():
    """The calling process's current Dask ``distributed`` client, or None (also when ``distributed`` is not loaded)."""
    if "distributed" not in sys.modules:  # whoever started a client has imported it
        return None
    from distributed import get_client, get_worker

    try:
        get_worker()
        return None  # inside a task: waiting on the worker's own client from here could deadlock
    except ValueError:
        pass
    try:
        return get_client()
    except ValueError:  # no client
        return None


def fold_client(client, template, refit_every: int):
    """``client`` when its workers may fit a backtest's folds, else None (fit them in process).

    Only folds that do not depend on each other go out: a fresh clone refitted in every fold
    (``refit=True``), not warm-started from the previous fold's model. An ensemble trained by worker
    processes (``n_jobs > 1``) stays too: Dask workers are daemons, which cannot start processes.
    """
    if client is None or refit_every != 1 or template.warm_start or (template.n_jobs > 1 and template.n_models > 1):
        return None
    return client
