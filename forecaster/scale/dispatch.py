"""Recognising a Dask DataFrame without importing Dask, so that Dask stays an optional dependency."""

from __future__ import annotations

import sys


def is_dask_frame(obj: object) -> bool:
    """Whether ``obj`` is a Dask DataFrame.

    Whoever holds a Dask DataFrame has imported ``dask.dataframe``; when that module is not loaded,
    ``obj`` cannot be one, and nothing is imported to find out.
    """
    module = sys.modules.get("dask.dataframe")
    return module is not None and isinstance(obj, module.DataFrame)
