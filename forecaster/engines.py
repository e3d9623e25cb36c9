"""Scale-out engines, found by name: how the estimator and the backtest reach Dask without importing a floor above.

The estimator and the backtest work on pandas frames in process. A Dask DataFrame, or an active Dask client, calls
for an engine of :mod:`forecaster.scale`, which builds on them (it fits estimators and runs backtest folds) and so
sits above them. They look the engine up here by name; ``forecaster.scale.engines`` registers the Dask engines
when the package is imported. This module imports neither the package nor Dask: it probes for Dask frames and
clients through the modules whoever holds one has already imported.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

_ENGINES: dict[str, Callable] = {}


def register(name: str, function: Callable) -> None:
    """Make ``function`` the engine called ``name`` (``"dask.fit"``, ``"dask.backtest"``, ...)."""
    _ENGINES[name] = function


def engine(name: str) -> Callable:
    """The engine registered as ``name``.

    Raises:
        RuntimeError: no engine of that name is registered (``forecaster`` registers its own when imported).
    """
    try:
        return _ENGINES[name]
    except KeyError:
        raise RuntimeError(
            f"No {name!r} engine is registered; importing forecaster registers the Dask engines (forecaster.scale.engines)."
        ) from None


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
