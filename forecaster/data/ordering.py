"""The order of a panel's rows: by series, then time, with series in the order of their ids' values.

The order of the series decides which windows a training batch draws and which series hold out windows at fit, so
it decides the forecasts. Categorical ids are ordered by their values, not by their categories' order, so that the
same panel gives the same forecasts whether its ids are text or categories (a common way to save memory).
"""

from __future__ import annotations

import pandas as pd


def _value_order(column: pd.Series) -> pd.Series:
    """Sort key of a column: a categorical column's values as its categories' own dtype; other columns as they are."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.astype(column.cat.categories.dtype)
    return column


def in_series_order(frame: pd.DataFrame, id_col: str, time_col: str) -> pd.DataFrame:
    """``frame`` sorted by series (ids in value order) and time, with a fresh index; dtypes are kept.

    Categories whose values do not compare with each other (text and numbers mixed) keep their categories' order.
    """
    keys = [id_col, time_col]
    try:
        ordered = frame.sort_values(keys, kind="stable", key=_value_order)
    except TypeError:  # values of mixed types: no order among them
        ordered = frame.sort_values(keys, kind="stable")
    return ordered.reset_index(drop=True)
