"""The first checks of a frame handed in (a pandas DataFrame, not empty, holding each needed column once), and series
ids as messages show them."""

from __future__ import annotations

import reprlib
from collections.abc import Iterable

import numpy as np
import pandas as pd


def plain(value: object) -> object:
    """A series id as the user's frame holds it: a numpy scalar as its Python value (``np.int64(6)`` is ``6``)."""
    return value.item() if isinstance(value, np.generic) else value


def shown_id(value: object) -> str:
    """A series id for messages: ``6`` or ``'store_6'``, never ``np.int64(6)``."""
    return repr(plain(value))


def shown_ids(values: Iterable) -> str:
    """Some series ids for messages, shortened as ``reprlib`` shortens a list (``[6, 7, 8, 9, 10, 11, ...]``)."""
    return reprlib.repr([plain(v) for v in values])


def require_frame(df: object, argument: str) -> pd.DataFrame:
    """``df`` if it is a non-empty pandas DataFrame; TypeError or ValueError naming ``argument`` otherwise."""
    if not isinstance(df, pd.DataFrame):
        kind = type(df)
        package = kind.__module__.split(".")[0]  # "dask.DataFrame", not a bare "DataFrame" that reads like pandas'
        got = kind.__name__ if package == "builtins" else f"{package}.{kind.__name__}"
        raise TypeError(f"`{argument}` must be a pandas DataFrame; got {got}.")
    if df.empty:
        raise ValueError(f"`{argument}` is empty.")
    return df


def require_columns(df: pd.DataFrame, needed: list[str], argument: str) -> None:
    """Refuse ``df`` where a ``needed`` column is missing or appears twice (as a concat of frames can leave it)."""
    missing = [name for name in needed if name not in df.columns]
    if missing:
        raise ValueError(
            f"`{argument}` is missing column(s) {', '.join(f'`{m}`' for m in missing)}; it has {reprlib.repr(list(df.columns))}."
        )
    twice = [name for name in dict.fromkeys(needed) if (df.columns == name).sum() > 1]
    if twice:
        raise ValueError(f"`{argument}` has column(s) {', '.join(f'`{n}`' for n in twice)} more than once; keep one of each.")
