"""Save and load fitted models without pickle: atomically, and with every file checked before it is used.

A model directory (format 2) holds:

* ``config.json``: the parameters, the fitted state (``FittedState.to_dict``) and how each history
  column is encoded. Categories and series ids are typed (``{"type": "int", "value": 1}``), so that
  ``1``, ``"1"``, ``1.0`` and timestamps come back as themselves.
* ``weights.pt``: a plain tensor state dict, read with ``torch.load(weights_only=True)``.
* ``history.npz``: the history tail used by ``predict()``, read with ``allow_pickle=False``; each
  column keeps its dtype (categorical, time zone, mixed-type object columns included).
* ``manifest.json``, written last: the format version and a SHA-256 of each of the three files.

``save`` builds every file in memory, writes them into a new hidden folder next to the target (same file
system), fsyncs them and swaps that folder in by renames, so ``path`` holds the old complete model or the
new one, never a mix. Nothing in the target is opened for writing, so a symlink there is never followed.

``load`` reads each file once, refuses it unless it matches the manifest, then validates the config against
a schema (required keys, types, allowed values, size bounds) and the parts against each other and against the
shapes of the weights before allocating the network. Every refusal is a :class:`ModelFileError` that names
the file or the key at fault. Format-1 files (no manifest; ``config.json`` records the checksums of the two
binary files) still load and forecast as they did.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import math
import os
import reprlib
import secrets
import shutil
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from .._version import __version__
from ..data.features import allowed_dtype, from_typed, index_from_typed, static_width, to_typed
from ..data.frequency import calendar_features, normalise_freq, season_spans_a_year
from ..data.roles import CovariateRoles
from ..data.scaling import SCALERS
from .attention import ATTENTIONS
from .network import Ensemble, NetworkConfig, Seq2SeqNetwork
from .params import CONSTRAINTS, check_params
from .state import FittedState

FORMAT_VERSION = 2
CONFIG, WEIGHTS, HISTORY, MANIFEST = "config.json", "weights.pt", "history.npz", "manifest.json"
MODEL_FILES = (CONFIG, WEIGHTS, HISTORY, MANIFEST)

# Bounds on what a model file may ask ``load`` to allocate. Real models sit far inside them.
MAX_MEMBERS = 1_000
MAX_HIDDEN = 16_384
MAX_LAYERS = 64
MAX_STEPS = 100_000  # input_size, horizon, season_length
MAX_WINDOW_CELLS = 100_000_000  # input_size * horizon * members: each member allocates an (horizon, input_size) table
MAX_FEATURES = 100_000  # covariates, categories, network inputs per step
MAX_QUANTILES = 999
MAX_SERIES = 10_000_000
MAX_CONFIG_BYTES = 256 * 2**20
MAX_MANIFEST_BYTES = 2**16


class ModelFileError(ValueError):
    """A model directory is missing, incomplete, tampered with or from an incompatible version."""


class _Invalid(Exception):
    """A part of a model file breaks the schema; ``load_model`` turns it into a ModelFileError naming the folder."""


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _show(value: Any) -> str:
    return reprlib.repr(value)


# ---------------------------------------------------------------------------- schema
# A check takes (value, where) and raises _Invalid naming ``where`` (the dotted key) when the value breaks it.
Check = Callable[[Any, str], None]


def _join(where: str, key: Any) -> str:
    return f"{where}.{key}" if where else str(key)


def _must(where: str, must: str, value: Any) -> _Invalid:
    return _Invalid(f"`{where}` in {CONFIG} must be {must}; got {_show(value)}.")


def _integer(low: int, high: int) -> Check:
    def check(value: Any, where: str) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise _must(where, f"an integer in [{low}, {high}]", value)

    return check


def _real(low: float = -math.inf, high: float = math.inf, low_open: bool = False, high_open: bool = False) -> Check:
    bounds = f"{'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"
    must = "a finite number" if (low, high) == (-math.inf, math.inf) else f"a number in {bounds}"

    def check(value: Any, where: str) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise _must(where, must, value)
        if value < low or value > high or (low_open and value == low) or (high_open and value == high):
            raise _must(where, must, value)

    return check


def _flag(value: Any, where: str) -> None:
    if not isinstance(value, bool):
        raise _must(where, "true or false", value)


def _text(*allowed: str) -> Check:
    def check(value: Any, where: str) -> None:
        if not isinstance(value, str) or value == "" or (allowed and value not in allowed):
            raise _must(where, f"one of {allowed}" if allowed else "a non-empty string", value)

    return check


def _nullable(inner: Check) -> Check:
    def check(value: Any, where: str) -> None:
        if value is not None:
            inner(value, where)

    return check


def _list(item: Check, most: int) -> Check:
    def check(value: Any, where: str) -> None:
        if not isinstance(value, list) or len(value) > most:
            raise _must(where, f"a list of at most {most} items", value)
        for i, element in enumerate(value):
            item(element, f"{where}[{i}]")

    return check


def _mapping(item: Check, most: int) -> Check:
    def check(value: Any, where: str) -> None:
        if not isinstance(value, dict) or len(value) > most:
            raise _must(where, f"an object of at most {most} entries", value)
        for key, element in value.items():
            item(element, _join(where, key))

    return check


def _record(fields: dict[str, tuple[Check, bool]]) -> Check:
    """An object with these keys only; ``True`` marks the required ones."""

    def check(value: Any, where: str) -> None:
        if not isinstance(value, dict):
            raise _must(where, "an object", value)
        unknown = [key for key in value if key not in fields]
        if unknown:
            raise _Invalid(f"`{_join(where, unknown[0])}` in {CONFIG} is not a key this forecaster ({__version__}) knows.")
        for key, (inner, required) in fields.items():
            if key in value:
                inner(value[key], _join(where, key))
            elif required:
                raise _Invalid(f"`{_join(where, key)}` is missing from {CONFIG}.")

    return check


def _scalar(value: Any, where: str) -> None:
    if not isinstance(value, (str, int, float, bool)):
        raise _must(where, "a string, number or boolean", value)


def _typed_value(value: Any, where: str) -> None:
    try:
        from_typed(value)
    except ValueError as error:
        raise _must(where, f"a typed value ({error})", value) from None


def _typed_index(value: Any, where: str) -> None:
    if not isinstance(value, dict) or not isinstance(value.get("values"), list) or len(value["values"]) > MAX_SERIES:
        raise _must(where, f"a typed index of at most {MAX_SERIES} labels", value)
    try:
        index_from_typed(value)
    except ValueError as error:
        raise _must(where, f"a typed index ({error})", value) from None


def _sha256(value: Any, where: str) -> None:
    if not isinstance(value, str) or len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
        raise _must(where, "a SHA-256 in hexadecimal", value)


def _param_value(value: Any, where: str) -> None:
    """A parameter in JSON: a scalar, null or a list of scalars (``check_params`` then applies its own table)."""
    if isinstance(value, list):
        for i, element in enumerate(value):
            _scalar(element, f"{where}[{i}]")
    elif value is not None:
        _scalar(value, where)


ENCODINGS = ("numpy", "datetime_tz", "str", "typed", "category")


def _encoding(value: Any, where: str, nested: bool = False) -> None:
    """How one history column is stored in ``history.npz`` (see :func:`_encode_column`)."""
    kinds = tuple(k for k in ENCODINGS if not (nested and k == "category"))
    _record({"kind": (_text(*kinds), True), "dtype": (_text(), False), "ordered": (_flag, False), "categories": (_any, False)})(
        value, where
    )
    kind = value["kind"]
    needed = {"kind", "ordered", "categories"} if kind == "category" else {"kind", "dtype"}
    if set(value) != needed:
        raise _Invalid(f"`{where}` in {CONFIG} of kind {kind!r} must have exactly the keys {sorted(needed)}.")
    if kind == "category":
        _encoding(value["categories"], f"{where}.categories", nested=True)
        return
    try:
        dtype = allowed_dtype(value["dtype"])
    except ValueError as error:
        raise _must(f"{where}.dtype", f"a dtype a model file holds ({error})", value["dtype"]) from None
    numpy = isinstance(dtype, np.dtype) and dtype.kind in "biufMm"
    fits = {
        "numpy": numpy,
        "datetime_tz": isinstance(dtype, pd.DatetimeTZDtype),
        "str": not numpy and not isinstance(dtype, (pd.CategoricalDtype, pd.DatetimeTZDtype)),
        "typed": not numpy and not isinstance(dtype, (pd.CategoricalDtype, pd.DatetimeTZDtype)),
    }
    if not fits[kind]:
        raise _must(f"{where}.dtype", f"a dtype that a {kind!r} column holds", value["dtype"])


def _any(value: Any, where: str) -> None:
    """Checked by the caller."""


# Checks of the fields of ``NetworkConfig``; a field added later without a row here is checked by its default's type.
NETWORK_FIELDS: dict[str, Check] = {
    "input_size": _integer(1, MAX_STEPS),
    "horizon": _integer(1, MAX_STEPS),
    "past_features": _integer(0, MAX_FEATURES),
    "future_features": _integer(0, MAX_FEATURES),
    "static_features": _integer(0, MAX_FEATURES),
    "n_outputs": _integer(1, MAX_QUANTILES),
    "median_index": _integer(0, MAX_QUANTILES - 1),
    "hidden_size": _integer(1, MAX_HIDDEN),
    "num_layers": _integer(1, MAX_LAYERS),
    "dropout": _real(0.0, 1.0, high_open=True),
    "cell": _text("gru", "lstm"),
    "attention": _text(*ATTENTIONS),
    "skip": _flag,
    "values": _text("states", "observations"),
    "seasonal_channels": _integer(0, MAX_FEATURES),
    "trend_channels": _integer(0, MAX_FEATURES),
}


def _network_schema() -> Check:
    """``fitted.network``: the fields of ``NetworkConfig``; those with a default may be missing (files from before them)."""
    by_type: dict[Any, Check] = {bool: _flag, int: _integer(0, MAX_FEATURES), float: _real(), str: _text()}
    fields = {}
    for spec in dataclasses.fields(NetworkConfig):
        fallback = by_type.get(type(spec.default), _any)
        fields[spec.name] = (NETWORK_FIELDS.get(spec.name, fallback), spec.default is dataclasses.MISSING)
    return _record(fields)


V1_KINDS = ("datetime", "bool", "int", "float", "str")


def _config_schema(version: int) -> Check:
    """The schema of ``config.json``: keys, types, allowed values and size bounds. Format 1 lacks some fields."""
    new = version >= 2
    network = _network_schema()
    names = _list(_text(), MAX_FEATURES)
    scaling = _record({"mean": (_real(), True), "std": (_real(0.0, math.inf, low_open=True), True)})
    features = _record(
        {
            "numeric": (_mapping(scaling, MAX_FEATURES), True),
            "categories": (_mapping(_list(_typed_value if new else _scalar, MAX_FEATURES), MAX_FEATURES), True),
        }
    )
    if new:
        column = _record({"name": (_text(), True), "encoding": (_encoding, True)})
        history_columns = _list(column, MAX_FEATURES + 3)
    else:
        history_columns = _mapping(_text(*V1_KINDS), MAX_FEATURES + 3)
    training_end = _record(
        {
            "ids": (_typed_index if new else _list(_scalar, MAX_SERIES), True),
            "ds": (_list(_text(), MAX_SERIES), True),
            "name": (_nullable(_text()), False),
        }
    )
    fitted = _record(
        {
            "freq": (_text(), True),
            "season_length": (_integer(1, MAX_STEPS), True),
            "input_size": (_integer(1, MAX_STEPS), True),
            "roles": (_record({"future": (names, True), "past": (names, True), "static": (names, True)}), True),
            "features": (features, True),
            "quantiles": (_list(_real(0.0, 1.0, low_open=True, high_open=True), MAX_QUANTILES), True),
            "network": (network, True),
            "n_members": (_integer(1, MAX_MEMBERS), new),
            "tz": (_nullable(_text()), True),
            "history_columns": (history_columns, True),
            "training_end": (training_end, True),
            "scaler": (_text(*SCALERS), new),
            "log_target": (_flag, new),
            "seasonal_profile": (_flag, new),
            "trend_line": (_flag, new),
            "warm_starts": (_integer(0, 2**31), new),
        }
    )
    top: dict[str, tuple[Check, bool]] = {
        "format_version": (_integer(1, FORMAT_VERSION), True),
        "forecaster_version": (_text(), True),
        "params": (_mapping(_param_value, 10 * len(CONSTRAINTS)), True),
        "fitted": (fitted, True),
    }
    if not new:
        top["sha256"] = (_record({WEIGHTS: (_sha256, True), HISTORY: (_sha256, True)}), True)
    return _record(top)


_MANIFEST_SCHEMA = _record(
    {
        "format_version": (_integer(2, 2**31), True),
        "sha256": (_record({name: (_sha256, True) for name in (CONFIG, WEIGHTS, HISTORY)}), True),
    }
)


# ---------------------------------------------------------------------------- history columns
def _encode_column(values: pd.Series, key: str) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """How a column is stored (JSON) and its arrays, none of them of object dtype, so no pickle is ever needed.

    NumPy dtypes are stored as they are; time-zone-aware times as UTC; categoricals as codes plus their
    categories (encoded the same way); text as a unicode array; anything else (mixed-type object columns,
    nullable extension dtypes) as a JSON list of typed values.

    Raises:
        TypeError: a value of a type a model file cannot hold (``features.to_typed``).
    """
    dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        encoding, arrays = _encode_column(pd.Series(dtype.categories), f"{key}_categories")
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


def _decode_column(encoding: dict[str, Any], arrays: dict[str, np.ndarray], key: str, where: str) -> Any:
    """Inverse of :func:`_encode_column` on a checked ``encoding``; _Invalid where the arrays do not fit it."""
    array = arrays[key]
    kind = encoding["kind"]
    wrong = _Invalid(f"Array `{key}` of {HISTORY} does not fit `{where}` in {CONFIG} ({array.dtype}, shape {array.shape}).")
    if kind == "category":
        categories = pd.Index(_decode_column(encoding["categories"], arrays, f"{key}_categories", f"{where}.categories"))
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
            raise _Invalid(f"Array `{key}` of {HISTORY} is not a list of typed values ({error}).") from None
    objects = np.empty(len(values), dtype=object)
    objects[:] = values
    if isinstance(dtype, np.dtype):
        return objects
    try:
        return pd.array(objects, dtype=dtype)
    except Exception as error:  # noqa: BLE001 - values that do not fit their dtype
        raise _Invalid(f"Array `{key}` of {HISTORY} does not fit dtype {encoding['dtype']!r} ({error}).") from None


def _history_bytes(history: pd.DataFrame) -> tuple[bytes, list[dict[str, Any]]]:
    arrays: dict[str, np.ndarray] = {}
    columns = []
    for i, name in enumerate(history.columns):
        try:
            encoding, parts = _encode_column(history[name], f"c{i}")
        except (TypeError, ValueError) as error:
            raise TypeError(f"Column `{name}` of the history cannot be saved: {error}.") from error
        arrays.update(parts)
        columns.append({"name": name, "encoding": encoding})
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue(), columns


def _check_zip(data: bytes, name: str) -> None:
    """Refuse archives that would expand far beyond their size (both files are uncompressed zip archives)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            size = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, ValueError) as error:
        raise _Invalid(f"`{name}` is not a readable archive ({error}).") from None
    if size > 2 * len(data) + 2**20:
        raise _Invalid(f"`{name}` would expand to {size} bytes from {len(data)}; it was not written by `save`.")


def _read_history(data: bytes, fitted: dict[str, Any], version: int) -> pd.DataFrame:
    _check_zip(data, HISTORY)
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            arrays = {key: archive[key] for key in archive.files}
    except Exception as error:  # noqa: BLE001 - any failure here means an unusable file
        raise _Invalid(f"`{HISTORY}` could not be read ({error}).") from None
    columns: dict[str, Any] = {}
    if version == 1:
        kinds = fitted["history_columns"]
        expected = {f"c{i}" for i in range(len(kinds))}
        if set(arrays) != expected:
            raise _Invalid(f"`{HISTORY}` holds arrays {_show(sorted(arrays))}; `fitted.history_columns` describes {len(kinds)}.")
        stored = {"datetime": "i", "bool": "b", "int": "i", "float": "f", "str": "U"}
        for i, (name, kind) in enumerate(kinds.items()):
            array = arrays[f"c{i}"]
            if array.ndim != 1 or array.dtype.kind != stored[kind]:
                raise _Invalid(f"Array `c{i}` of {HISTORY} does not fit `fitted.history_columns.{name}` ({array.dtype}).")
            columns[name] = _restore_v1_column(array, kind)
    else:
        specs = fitted["history_columns"]
        names = [spec["name"] for spec in specs]
        if len(set(names)) != len(names):
            raise _Invalid(f"`fitted.history_columns` in {CONFIG} names a column twice: {_show(names)}.")
        expected = set()
        for i, spec in enumerate(specs):
            encoding, key = spec["encoding"], f"c{i}"
            expected |= {key, f"{key}_categories"} if encoding["kind"] == "category" else {key}
        if set(arrays) != expected:
            raise _Invalid(
                f"`{HISTORY}` holds arrays {_show(sorted(arrays))}; `fitted.history_columns` describes {sorted(expected)}."
            )
        for i, spec in enumerate(specs):
            columns[spec["name"]] = _decode_column(spec["encoding"], arrays, f"c{i}", f"fitted.history_columns[{i}]")
    lengths = {len(values) for values in columns.values()}
    if len(lengths) > 1:
        raise _Invalid(f"The columns of `{HISTORY}` differ in length ({sorted(lengths)}).")
    return pd.DataFrame(columns)


def _restore_v1_column(values: np.ndarray, kind: str) -> np.ndarray:
    """A format-1 column: times as int64 nanoseconds, text as str (every non-numeric column was stringified)."""
    if kind == "datetime":
        return values.astype("datetime64[ns]")
    return values.astype(object) if kind == "str" else values


# ---------------------------------------------------------------------------- save
def _json_param(name: str, value: Any) -> Any:
    if isinstance(value, pd.DateOffset):
        return value.freqstr
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (tuple, list, pd.Index, np.ndarray)):
        return [_json_param(name, v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"Parameter `{name}`={value!r} cannot be stored in a model file.")


def _model_files(model) -> dict[str, bytes]:
    """Every file of the model directory, in memory: nothing touches the disk unless all of them encode."""
    buffer = io.BytesIO()
    torch.save({k: v.detach().cpu() for k, v in model.network_.state_dict().items()}, buffer)
    weights = buffer.getvalue()
    history, columns = _history_bytes(model.history_)
    config = {
        "format_version": FORMAT_VERSION,
        "forecaster_version": __version__,
        "params": {name: _json_param(name, value) for name, value in model.get_params().items()},
        "fitted": {**model.state_.to_dict(), "history_columns": columns},
    }
    try:
        config_bytes = json.dumps(config, indent=2, allow_nan=False).encode()
    except (TypeError, ValueError) as error:
        raise TypeError(f"The fitted state cannot be stored as JSON: {error}.") from error
    files = {WEIGHTS: weights, HISTORY: history, CONFIG: config_bytes}
    manifest = {"format_version": FORMAT_VERSION, "sha256": {name: _digest(data) for name, data in files.items()}}
    return {**files, MANIFEST: json.dumps(manifest, indent=2).encode()}


def _check_target(folder: Path) -> None:
    """Refuse to replace anything but a model directory (or a symlink, which is replaced, never followed)."""
    if folder.is_symlink() or not os.path.lexists(folder):
        return
    if not folder.is_dir():
        raise FileExistsError(f"{str(folder)!r} exists and is not a directory; `save` writes a model directory there.")
    foreign = sorted(
        entry.name for entry in os.scandir(folder) if entry.name not in MODEL_FILES or entry.is_dir(follow_symlinks=False)
    )
    if foreign:
        raise FileExistsError(
            f"{str(folder)!r} holds {_show(foreign)}, which a model directory does not; `save` replaces the whole "
            "directory, so it refuses. Save to a new or empty directory, or to one holding only a model."
        )


def _write_file(path: Path, data: bytes) -> None:
    """Create ``path`` (never an existing file or a symlink) with ``data``, flushed to disk."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    with os.fdopen(os.open(path, flags, 0o666), "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _fsync_dir(path: Path) -> None:
    """Make renames and new entries in a directory durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _rename(source: Path, target: Path) -> None:
    os.rename(source, target)


def _new_sibling(folder: Path, tag: str, create: bool) -> Path:
    """A fresh hidden name next to ``folder``: ``.<name>.<tag>-<random>`` (created as a directory when asked)."""
    while True:
        candidate = folder.parent / f".{folder.name}.{tag}-{secrets.token_hex(6)}"
        if not create:
            if not os.path.lexists(candidate):
                return candidate
            continue
        try:
            candidate.mkdir(mode=0o777)  # the umask applies, as for any folder the user creates
            return candidate
        except FileExistsError:
            continue


def _remove(path: Path) -> None:
    if path.is_symlink():
        path.unlink()
    else:
        shutil.rmtree(path)


def _swap_in(temp: Path, folder: Path) -> None:
    """Put the complete model in ``temp`` at ``folder`` by renames.

    Without an old model: one rename. With one: rename it aside (``.<name>.old-*``), rename the new one in,
    then delete the old. If the second rename fails the old one is renamed back; if the process dies between
    the two, ``load`` says where the old model is.
    """
    if not os.path.lexists(folder):
        _rename(temp, folder)
        _fsync_dir(folder.parent)
        return
    aside = _new_sibling(folder, "old", create=False)
    _rename(folder, aside)
    try:
        _rename(temp, folder)
    except BaseException:
        _rename(aside, folder)
        raise
    _fsync_dir(folder.parent)
    try:
        _remove(aside)
    except OSError as error:
        warnings.warn(
            f"The model was saved, but its previous version in {str(aside)!r} could not be removed: {error}", stacklevel=3
        )


def save_model(model, path) -> None:
    """Write a fitted :class:`Seq2SeqForecaster` to directory ``path``, atomically.

    ``path`` may not exist, or be a directory holding a model only (it is replaced), or a symlink (the link
    is replaced; what it points to is left alone).

    Raises:
        FileExistsError: ``path`` is a file, or a directory that holds other files.
        TypeError: a parameter or a history value that a model file cannot hold (nothing is written).
    """
    folder = Path(os.path.abspath(os.fspath(path)))
    files = _model_files(model)
    _check_target(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    temp = _new_sibling(folder, "saving", create=True)
    try:
        for name in (WEIGHTS, HISTORY, CONFIG, MANIFEST):  # the manifest last: its presence marks a complete save
            _write_file(temp / name, files[name])
        _fsync_dir(temp)
        _swap_in(temp, folder)
    except BaseException:
        if os.path.lexists(temp):
            shutil.rmtree(temp, ignore_errors=True)
        raise


# ---------------------------------------------------------------------------- load
def _absent(folder: Path) -> ModelFileError:
    """The error for a missing model directory, pointing at a model an interrupted save left beside it."""
    if os.path.lexists(folder):
        return ModelFileError(f"{str(folder)!r} is not a model directory.")
    parent = folder.parent
    siblings = sorted(parent.glob(f".{folder.name}.old-*")) if parent.is_dir() else []
    if siblings:
        return ModelFileError(
            f"No model at {str(folder)!r}: a save to it was interrupted between its two renames (or is in progress). "
            f"The previous model is intact in {str(siblings[-1])!r}; rename that folder to {str(folder)!r} to use it."
        )
    return ModelFileError(f"No model directory at {str(folder)!r}.")


def _read_file(folder: Path, name: str, limit: int | None = None) -> bytes:
    path = folder / name
    if limit is not None and path.stat().st_size > limit:
        raise ModelFileError(f"`{name}` in {str(folder)!r} is larger than {limit} bytes; it was not written by `save`.")
    return path.read_bytes()


def _parse_json(data: bytes, name: str, folder: Path) -> Any:
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as error:  # invalid JSON or UTF-8, integers too long, nesting too deep
        raise ModelFileError(f"`{name}` in {str(folder)!r} is not valid JSON ({error}).") from error


def _version_error(folder: Path, version: Any) -> ModelFileError:
    return ModelFileError(
        f"Model in {str(folder)!r} has format version {version!r}; this forecaster ({__version__}) reads versions "
        f"1 to {FORMAT_VERSION}. Refit the model with this version."
    )


def _read_files(folder: Path) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The parsed config and the bytes of the binary files, each checked against its recorded SHA-256."""
    if not folder.is_dir():
        raise _absent(folder)
    has_manifest = os.path.lexists(folder / MANIFEST)
    for name in (CONFIG, WEIGHTS, HISTORY):
        if not (folder / name).is_file():
            raise ModelFileError(f"Model directory {str(folder)!r} has no `{name}`; was it written by `save`?")
    if has_manifest:
        manifest = _parse_json(_read_file(folder, MANIFEST, MAX_MANIFEST_BYTES), MANIFEST, folder)
        version = manifest.get("format_version") if isinstance(manifest, dict) else None
        if isinstance(version, int) and not isinstance(version, bool) and version > FORMAT_VERSION:
            raise _version_error(folder, version)
        try:
            _MANIFEST_SCHEMA(manifest, "")
        except _Invalid as error:
            raise ModelFileError(f"`{MANIFEST}` in {str(folder)!r} is not a manifest `save` writes: {error}") from None
        expected = manifest["sha256"]
    files = {name: _read_file(folder, name, MAX_CONFIG_BYTES if name == CONFIG else None) for name in (CONFIG, WEIGHTS, HISTORY)}
    if has_manifest:
        for name in (CONFIG, WEIGHTS, HISTORY):
            if _digest(files[name]) != expected[name]:
                raise ModelFileError(
                    f"`{name}` in {str(folder)!r} does not match its recorded checksum: it was modified or truncated."
                )
    config = _parse_json(files[CONFIG], CONFIG, folder)
    version = config.get("format_version") if isinstance(config, dict) else None
    if has_manifest and version != manifest["format_version"]:
        raise ModelFileError(
            f"`{CONFIG}` in {str(folder)!r} has format version {version!r}, its manifest {manifest['format_version']!r}."
        )
    if not has_manifest:
        if version == 1:
            recorded = config.get("sha256")
            for name in (WEIGHTS, HISTORY):
                if not isinstance(recorded, dict) or _digest(files[name]) != recorded.get(name):
                    raise ModelFileError(
                        f"`{name}` in {str(folder)!r} does not match its recorded checksum: it was modified or truncated."
                    )
        elif isinstance(version, int) and not isinstance(version, bool) and 2 <= version <= FORMAT_VERSION:
            raise ModelFileError(
                f"Model directory {str(folder)!r} has no `{MANIFEST}`: the save that wrote it did not finish, "
                "or the file was removed."
            )
        else:
            raise _version_error(folder, version)
    return config, files


# Parameters that files written before they existed lack, with the value those models were fitted with.
_PARAM_DEFAULTS = {"seasonal_profile": False, "trend_line": False, "theta_weight": 0.0, "holt_winters_weight": 0.0}


def _estimator(cls, params: dict[str, Any]):
    """The estimator with the file's parameters, refused unless ``check_params`` accepts them."""
    unknown = [name for name in params if name not in CONSTRAINTS]
    if unknown:
        raise _Invalid(f"`params.{unknown[0]}` in {CONFIG} is not a parameter of this forecaster ({__version__}).")
    if "horizon" not in params:
        raise _Invalid(f"`params.horizon` is missing from {CONFIG}.")
    model = cls(**{**_PARAM_DEFAULTS, **params})
    values = model.get_params()
    try:
        # A model fitted on a GPU loads on a machine without one (it runs on the CPU), so availability is not checked.
        check_params({**values, "device": "cpu" if values["device"] == "cuda" else values["device"]})
        model._roles()
    except (TypeError, ValueError) as error:
        raise _Invalid(f"`params` in {CONFIG}: {error}") from None
    return model


def _check_bounds(fitted: dict[str, Any]) -> None:
    """Bounds across keys, before anything is allocated."""
    network = fitted["network"]
    members = fitted.get("n_members", 1)
    cells = network["input_size"] * network["horizon"] * members
    if cells > MAX_WINDOW_CELLS:
        raise _Invalid(
            f"`fitted.network.input_size` x `fitted.network.horizon` x `fitted.n_members` in {CONFIG} is {cells}; "
            f"at most {MAX_WINDOW_CELLS} is allowed."
        )
    ends = fitted["training_end"]
    if len(ends["ds"]) != len(ends["ids"] if isinstance(ends["ids"], list) else ends["ids"]["values"]):
        raise _Invalid(f"`fitted.training_end.ids` and `fitted.training_end.ds` in {CONFIG} differ in length.")
    try:
        pd.to_datetime(ends["ds"])
    except (ValueError, TypeError) as error:
        raise _Invalid(f"`fitted.training_end.ds` in {CONFIG} holds a value that is not a timestamp ({error}).") from None


def _check_agreement(state: FittedState, params: dict[str, Any]) -> None:
    """The parts of the fitted state agree with each other and with the parameters ``predict`` reads."""
    net, levels = state.network, state.quantiles
    if list(levels) != sorted(set(levels)) or 0.5 not in levels:
        raise _Invalid(f"`fitted.quantiles` in {CONFIG} must be distinct increasing levels including 0.5; got {list(levels)}.")
    agree = [
        ("fitted.network.n_outputs", net.n_outputs, "the number of `fitted.quantiles`", len(levels)),
        ("fitted.network.median_index", net.median_index, "the position of 0.5 in `fitted.quantiles`", levels.index(0.5)),
        ("fitted.network.input_size", net.input_size, "`fitted.input_size`", state.input_size),
        ("params.horizon", params["horizon"], "`fitted.network.horizon`", net.horizon),
    ]
    for key, value, what, expected in agree:
        if value != expected:
            raise _Invalid(f"`{key}` in {CONFIG} is {value!r}, but {what} is {expected!r}.")
    if params["quantiles"] is not None and not {float(q) for q in params["quantiles"]} <= set(levels):
        raise _Invalid(f"`params.quantiles` in {CONFIG} lists levels the network does not output ({list(levels)}).")
    roles = state.roles
    try:
        CovariateRoles.from_arguments(
            roles.future, roles.past, roles.static, (params["id_col"], params["time_col"], params["target_col"])
        )
    except (TypeError, ValueError) as error:
        raise _Invalid(f"`fitted.roles` in {CONFIG}: {error}") from None
    spec = state.features
    numeric = set(roles.past) | set(roles.future) | {s for s in roles.static if s in spec.numeric}
    categorical = {s for s in roles.static if s not in spec.numeric}
    if set(spec.numeric) != numeric or set(spec.categories) != categorical:
        raise _Invalid(f"`fitted.features` in {CONFIG} does not encode exactly the covariates of `fitted.roles`.")
    for name, values in spec.categories.items():
        labels = np.empty(len(values), dtype=object)
        labels[:] = values
        if not pd.Index(labels).is_unique:
            raise _Invalid(f"`fitted.features.categories.{name}` in {CONFIG} lists a category twice.")
    try:
        offset = normalise_freq(state.freq)
        calendar = calendar_features(pd.date_range("2001-01-01", periods=1, freq=offset), offset).shape[1]
    except Exception as error:  # noqa: BLE001 - pandas raises several types for unusable offsets
        raise _Invalid(f"`fitted.freq` in {CONFIG}: {error}") from None
    decomposition = 2 * (state.seasonal_profile and state.season_length >= 2) + int(state.trend_line)
    widths = [
        ("static_features", net.static_features, static_width(roles.static, spec)),
        ("past_features", net.past_features, len(roles.past) + calendar + decomposition),
        ("future_features", net.future_features, len(roles.future) + calendar + decomposition),
    ]
    for key, value, expected in widths:
        if value != expected:
            raise _Invalid(
                f"`fitted.network.{key}` in {CONFIG} is {value}, but the covariates, calendar and decomposition give {expected}."
            )
    history = state.history
    needed = {params["id_col"], params["time_col"], params["target_col"], *roles.all}
    if set(history.columns) != needed:
        raise _Invalid(f"`fitted.history_columns` in {CONFIG} must be the columns {sorted(needed)}; got {list(history.columns)}.")
    if history[params["time_col"]].dtype != np.dtype("datetime64[ns]") or not pd.api.types.is_float_dtype(
        history[params["target_col"]]
    ):
        raise _Invalid(f"The time and target columns of `{HISTORY}` must hold naive timestamps and floats.")
    if state.tz is not None:
        mode, _, zone = state.tz.partition(":")
        try:
            if mode not in ("wall", "utc"):
                raise ValueError("it must be 'wall:<zone>' or 'utc:<zone>'")
            pd.Timestamp("2001-01-01").tz_localize(zone)
        except Exception as error:  # noqa: BLE001 - unknown zones raise several types
            raise _Invalid(f"`fitted.tz` in {CONFIG} is {state.tz!r}: {error}") from None


def _read_network(data: bytes, config: NetworkConfig, members: int) -> Ensemble:
    """The ensemble, built only once every tensor in ``weights.pt`` has the shape ``config`` gives it."""
    _check_zip(data, WEIGHTS)
    try:
        state = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as error:  # noqa: BLE001 - any failure here means an unusable file
        raise _Invalid(f"Could not load `{WEIGHTS}`: {error}") from None
    if not isinstance(state, dict) or not all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items()):
        raise _Invalid(f"`{WEIGHTS}` must hold a mapping of parameter names to tensors.")
    with torch.device("meta"):  # shapes without allocating anything
        template = {name: tensor.shape for name, tensor in Seq2SeqNetwork(config).state_dict().items()}
    found = {key.split(".")[1] for key in state if key.startswith("members.") and key.count(".") >= 2}
    if len(found) != members:
        raise _Invalid(f"`fitted.n_members` in {CONFIG} is {members}, but `{WEIGHTS}` holds {len(found)} member(s).")
    expected = {f"members.{k}.{name}": shape for k in range(members) for name, shape in template.items()}
    missing, extra = sorted(set(expected) - set(state)), sorted(set(state) - set(expected))
    if missing or extra:
        raise _Invalid(
            f"`{WEIGHTS}` does not hold the network `fitted.network` in {CONFIG} describes "
            f"(missing {_show(missing)}, unexpected {_show(extra)})."
        )
    for key, shape in expected.items():
        tensor = state[key]
        if tensor.shape != shape or not tensor.is_floating_point():
            raise _Invalid(
                f"`{key}` in `{WEIGHTS}` is {tensor.dtype} of shape {tuple(tensor.shape)}, but `fitted.network` in "
                f"{CONFIG} gives a float tensor of shape {tuple(shape)}."
            )
    network = Ensemble(config, members)
    network.load_state_dict(state)
    network.eval()
    return network


def load_model(cls, path):
    """Rebuild a fitted estimator from ``path`` (see :func:`save_model`).

    Raises:
        ModelFileError: a file is missing, does not match its checksum, or breaks the schema (the message names it).
    """
    folder = Path(path)
    config, files = _read_files(folder)
    try:
        return _load(cls, config, files)
    except _Invalid as error:
        raise ModelFileError(f"Model directory {str(folder)!r}: {error}") from None


def _load(cls, config: dict[str, Any], files: dict[str, bytes]):
    version = config["format_version"]
    _config_schema(version)(config, "")
    fitted = config["fitted"]
    _check_bounds(fitted)
    model = _estimator(cls, config["params"])
    params = model.get_params()
    try:
        offset = normalise_freq(fitted["freq"])
    except ValueError as error:
        raise _Invalid(f"`fitted.freq` in {CONFIG}: {error}") from None
    history = _read_history(files[HISTORY], fitted, version)
    trend = params["trend_line"]
    legacy = {  # what files written before the state recorded these fields were fitted with
        "scaler": params["scaler"],
        "log_target": bool(params["log_target"]),
        "seasonal_profile": bool(params["seasonal_profile"]),
        "trend_line": season_spans_a_year(offset, int(fitted["season_length"])) if trend is None else bool(trend),
    }
    try:
        state = FittedState.from_dict(fitted, history, model.id_col, legacy)
    except (TypeError, ValueError, KeyError) as error:
        raise _Invalid(f"`fitted` in {CONFIG} could not be read: {error}") from None
    _check_agreement(state, params)
    network = _read_network(files[WEIGHTS], state.network, state.n_members)
    model.state_ = state
    model.device_ = "cpu"
    model.train_results_ = []
    model._cache = None
    model.network_ = network
    return model
