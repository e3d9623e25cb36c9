"""Reading a table a user names by path: Parquet by its suffix (``.parquet``, ``.pq``, any case), else CSV.

The command line and study specs read files the same way, and say which file failed and why (an empty file, a
binary file read as CSV), instead of pandas' bare "No columns to parse from file".
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

PARQUET_SUFFIXES = (".parquet", ".pq")


def read_table(path: str | Path, dtype: dict | None = None) -> pd.DataFrame:
    """The table in the file at ``path``; ValueError naming it where it cannot be read.

    ``dtype``: column types for a CSV (a Parquet file carries its own).
    """
    path = Path(path)
    parquet = path.suffix.lower() in PARQUET_SUFFIXES
    try:
        return pd.read_parquet(path) if parquet else pd.read_csv(path, dtype=dtype)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{str(path)!r} is empty: it holds no columns.") from None
    except (UnicodeDecodeError, pd.errors.ParserError) as error:
        raise ValueError(f"{str(path)!r} cannot be read as CSV ({error}); a Parquet file must end in .parquet or .pq.") from None
    except Exception as error:  # noqa: BLE001 - pyarrow's errors for a file that is not Parquet have no common base
        if not parquet:
            raise
        raise ValueError(f"{str(path)!r} cannot be read as Parquet ({error}).") from None
