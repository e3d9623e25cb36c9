"""``history.npz``: the history tail that ``predict()`` reads, stored column by column without pickle.

Each column keeps its dtype through a save and a load (categorical, time zone and mixed-type object columns
included); format-1 files, which stringified every non-numeric column, still read as they did.
"""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np
import pandas as pd

from ..data.features import allowed_dtype, from_typed, to_typed
from .file_layout import CONFIG, HISTORY, Invalid, check_zip, show


def encode_column(values: pd.Series, key: str) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """How a column is stored (JSON) and its arrays, none of them of object dtype, so no pickle is ever needed.

    NumPy dtypes are stored as they are; time-zone-aware times as UTC; categoricals as codes plus their
    categories (encoded the same way); text as a unicode array; anything else (mixed-type object columns,
    nullable extension dtypes) as a JSON list of typed values.

    Raises:
        TypeError: a value of a type a model file cannot hold (``features.to_typed``).
    """
    dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        encoding, arrays = encode_column(pd.Series(dtype.categories), f"{key}_categories")
        codes = values.cat.codes.to_numpy()
        return {"kind": "category", "ordered": bool(dtype.ordered), "categories": encoding}, {key: codes, **arrays}
    if isinstance(dtype, np.dtype) and dtype.kind in "biufMm":
        return {"kind": "numpy", "dtype": str(dtype)}, {key: values.to_numpy()}
    if isinstance(dtype, pd.DatetimeTZDtype):
        return {"kind": "datetime_tz", "dtype": str(dtype)}, {key: values.dt.tz_convert("UTC").dt.tz_localize(None).to_numpy()}
    allowed_dtype(str(dtype))  # TypeError below for a dtype a model file cannot restore
    items = values.tolist()
    if all(type(v) is str and not v.endswith("\x00") for v in items):  # NumPy strips trailing NULs of unicode arrays
        return {"kind": "str", "dtype": str(dtype)}, {key: np.array(items, dtype=str)}
    return {"kind": "typed", "dtype": str(dtype)}, {key: np.array(json.dumps([to_typed(v) for v in items]))}


def decode_column(encoding: dict[str, Any], arrays: dict[str, np.ndarray], key: str, where: str) -> Any:
    """Inverse of :func:`encode_column` on a checked ``encoding``; Invalid where the arrays do not fit it."""
    array = arrays[key]
    kind = encoding["kind"]
    wrong = Invalid(f"Array `{key}` of {HISTORY} does not fit `{where}` in {CONFIG} ({array.dtype}, shape {array.shape}).")
    if kind == "category":
        categories = pd.Index(decode_column(encoding["categories"], arrays, f"{key}_categories", f"{where}.categories"))
        if array.ndim != 1 or array.dtype.kind != "i" or not categories.is_unique:
            raise wrong
        if array.size and (array.min() < -1 or array.max() >= len(categories)):
            raise wrong
        return pd.Categorical.from_codes(array, dtype=pd.CategoricalDtype(categories, ordered=encoding["ordered"]))
    dtype = allowed_dtype(encoding["dtype"])
    if kind == "numpy":
        if array.ndim != 1 or array.dtype != dtype:
            raise wrong
        return array
    if kind == "datetime_tz":
        if array.ndim != 1 or array.dtype.kind != "M":
            raise wrong
        return pd.Series(array).dt.tz_localize("UTC").dt.tz_convert(dtype.tz).astype(dtype).array
    if kind == "str":
        if array.ndim != 1 or array.dtype.kind != "U":
            raise wrong
        values = array.tolist()
    else:
        if array.ndim != 0 or array.dtype.kind != "U":
            raise wrong
        try:
            items = json.loads(str(array[()]))
            if not isinstance(items, list):
                raise ValueError("not a list")
            values = [from_typed(item) for item in items]
        except ValueError as error:
            raise Invalid(f"Array `{key}` of {HISTORY} is not a list of typed values ({error}).") from None
    objects = np.empty(len(values), dtype=object)
    objects[:] = values
    if isinstance(dtype, np.dtype):
        return objects
    try:
        return pd.array(objects, dtype=dtype)
    except Exception as error:  # noqa: BLE001 - values that do not fit their dtype
        raise Invalid(f"Array `{key}` of {HISTORY} does not fit dtype {encoding['dtype']!r} ({error}).") from None


def history_bytes(history: pd.DataFrame) -> tuple[bytes, list[dict[str, Any]]]:
    arrays: dict[str, np.ndarray] = {}
    columns = []
    for i, name in enumerate(history.columns):
        try:
            encoding, parts = encode_column(history[name], f"c{i}")
        except (TypeError, ValueError) as error:
            raise TypeError(f"Column `{name}` of the history cannot be saved: {error}.") from error
        arrays.update(parts)
        columns.append({"name": name, "encoding": encoding})
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue(), columns


def read_history(data: bytes, fitted: dict[str, Any], version: int) -> pd.DataFrame:
    check_zip(data, HISTORY)
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            arrays = {key: archive[key] for key in archive.files}
    except Exception as error:  # noqa: BLE001 - any failure here means an unusable file
        raise Invalid(f"`{HISTORY}` could not be read ({error}).") from None
    columns: dict[str, Any] = {}
    if version == 1:
        kinds = fitted["history_columns"]
        expected = {f"c{i}" for i in range(len(kinds))}
        if set(arrays) != expected:
            raise Invalid(f"`{HISTORY}` holds arrays {show(sorted(arrays))}; `fitted.history_columns` describes {len(kinds)}.")
        stored = {"datetime": "i", "bool": "b", "int": "i", "float": "f", "str": "U"}
        for i, (name, kind) in enumerate(kinds.items()):
            array = arrays[f"c{i}"]
            if array.ndim != 1 or array.dtype.kind != stored[kind]:
                raise Invalid(f"Array `c{i}` of {HISTORY} does not fit `fitted.history_columns.{name}` ({array.dtype}).")
            columns[name] = restore_v1_column(array, kind)
    else:
        specs = fitted["history_columns"]
        names = [spec["name"] for spec in specs]
        if len(set(names)) != len(names):
            raise Invalid(f"`fitted.history_columns` in {CONFIG} names a column twice: {show(names)}.")
        expected = set()
        for i, spec in enumerate(specs):
            encoding, key = spec["encoding"], f"c{i}"
            expected |= {key, f"{key}_categories"} if encoding["kind"] == "category" else {key}
        if set(arrays) != expected:
            raise Invalid(
                f"`{HISTORY}` holds arrays {show(sorted(arrays))}; `fitted.history_columns` describes {sorted(expected)}."
            )
        for i, spec in enumerate(specs):
            columns[spec["name"]] = decode_column(spec["encoding"], arrays, f"c{i}", f"fitted.history_columns[{i}]")
    lengths = {len(values) for values in columns.values()}
    if len(lengths) > 1:
        raise Invalid(f"The columns of `{HISTORY}` differ in length ({sorted(lengths)}).")
    return pd.DataFrame(columns)


def restore_v1_column(values: np.ndarray, kind: str) -> np.ndarray:
    """A format-1 column: times as int64 nanoseconds, text as str (every non-numeric column was stringified)."""
    if kind == "datetime":
        return values.astype("datetime64[ns]")
    return values.astype(object) if kind == "str" else values
