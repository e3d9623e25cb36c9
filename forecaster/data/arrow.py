"""Columns backed by Arrow (``dtype_backend="pyarrow"``, ``pd.ArrowDtype``) as NumPy-backed ones of the same values.

A panel read from Parquet with the Arrow backend carries ids and statics the rest of the package (sorting, grouping,
model files) handles as NumPy-backed columns only: dictionary-encoded ids failed inside pandas' sort, Arrow-typed
statics made a fitted model that could not be saved. Converting where a frame comes in keeps every value.
"""

from __future__ import annotations

import pandas as pd


def _plain(column: pd.Series) -> pd.Series:
    """``column`` as a NumPy-backed (or pandas-extension) column of the same values; other columns as they are."""
    dtype = column.dtype
    if not isinstance(dtype, pd.ArrowDtype):
        return column
    import pyarrow as pa

    kind = dtype.pyarrow_dtype
    if pa.types.is_dictionary(kind):  # categories
        return column.astype(object).astype("category")
    if pa.types.is_integer(kind):
        return column.astype("Int64") if column.isna().any() else column.astype(dtype.numpy_dtype)
    if pa.types.is_floating(kind):
        return column.astype("float64")
    if pa.types.is_timestamp(kind):  # an Arrow column's .dt gives UTC clock times where its zone's are meant
        unit = kind.unit if kind.unit in ("s", "ms", "us", "ns") else "ns"
        return column.astype(pd.DatetimeTZDtype(unit=unit, tz=kind.tz) if kind.tz else f"datetime64[{unit}]")
    if pa.types.is_boolean(kind):
        return column.astype("boolean") if column.isna().any() else column.astype(bool)
    return column.astype(object)  # text and everything else: the values themselves


def plain_columns(frame: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """A copy of ``frame`` with a fresh index (an index level named like a column made every sort by it ambiguous) and
    its columns ``names`` NumPy-backed where they were Arrow-backed."""
    out = frame.reset_index(drop=True)
    for name in names:
        if name in out.columns:
            out[name] = _plain(out[name])
    return out
