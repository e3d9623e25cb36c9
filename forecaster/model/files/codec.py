"""The bytes of every file of a model directory: the config, the history tail and the weights, in memory.

- ``encode_model``: every file's bytes; nothing touches the disk unless every file encodes (``store`` writes them).
- ``history.npz``: the history tail that ``predict()`` reads, stored column by column without pickle. Each column
  keeps its dtype through a save and a load (categorical, time zone and mixed-type object columns included);
  format-1 files, which stringified every non-numeric column, still read as they did.
- ``weights.pt``: the network's tensors, read with ``weights_only=True``; the ensemble is built only once every
  tensor has the shape ``fitted.network`` gives it.
"""

from __future__ import annotations

import io
import json
import pickle
import re
from typing import Any

import numpy as np
import pandas as pd
import torch

from ..._version import __version__
from ...data.features import allowed_dtype, from_typed, to_typed
from ..network import Ensemble, NetworkConfig, Seq2SeqNetwork
from .layout import CONFIG, FORMAT_VERSION, HISTORY, MANIFEST, WEIGHTS, Invalid, check_zip, digest, show


def json_param(name: str, value: Any) -> Any:
    if isinstance(value, pd.DateOffset):
        return value.freqstr
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (tuple, list, pd.Index, np.ndarray)):
        return [json_param(name, v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"Parameter `{name}`={value!r} cannot be stored in a model file.")


def encode_model(model) -> dict[str, bytes]:
    """Every file of the model directory, in memory: nothing touches the disk unless all of them encode."""
    buffer = io.BytesIO()
    torch.save({k: v.detach().cpu() for k, v in model.network_.state_dict().items()}, buffer)
    weights = buffer.getvalue()
    history, columns = history_bytes(model.history_)
    config = {
        "format_version": FORMAT_VERSION,
        "forecaster_version": __version__,
        "params": {name: json_param(name, value) for name, value in model.get_params().items()},
        "fitted": {**model.state_.to_dict(), "history_columns": columns},
    }
    try:
        config_bytes = json.dumps(config, indent=2, allow_nan=False).encode()
    except (TypeError, ValueError) as error:
        raise TypeError(f"The fitted state cannot be stored as JSON: {error}.") from error
    files = {WEIGHTS: weights, HISTORY: history, CONFIG: config_bytes}
    manifest = {"format_version": FORMAT_VERSION, "sha256": {name: digest(data) for name, data in files.items()}}
    return {**files, MANIFEST: json.dumps(manifest, indent=2).encode()}


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


# Up to about this many weights a template network is built on the CPU (a few MB at most); larger ones on the meta
# device, which allocates nothing but imports torch's compiler stack (1-12 s) the first time it initialises weights.
CPU_TEMPLATE_WEIGHTS = 5_000_000


def _template(config: NetworkConfig) -> Seq2SeqNetwork:
    """A network of ``config``'s shapes, for the shapes only."""
    d = config.hidden_size
    inputs = 2 + config.past_features + config.static_features + config.future_features + config.input_size
    estimate = 16 * d * d * config.num_layers + d * (inputs + config.horizon) + config.input_size * config.horizon
    if estimate <= CPU_TEMPLATE_WEIGHTS:
        return Seq2SeqNetwork(config)
    with torch.device("meta"):  # shapes without allocating anything
        return Seq2SeqNetwork(config)


# Terminal colour codes, which torch puts in some of its messages.
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# What torch's weights-only unpickler says it refused (the rest of its message advises ways around the refusal).
_REFUSED = re.compile(r"WeightsUnpickler error:\s*(.+?)(?:\.\s|\.?$)", re.S)


def torch_reason(error: Exception) -> str:
    """What went wrong in a ``torch.load``, without colour codes and without torch's advice to load the file anyway
    (``weights_only=False``, ``add_safe_globals``): the one sentence that says what the file holds."""
    text = _ANSI.sub("", str(error))
    refused = _REFUSED.search(text)
    if refused:
        return " ".join(refused.group(1).split())
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    first = lines[0] if lines else ""
    if not first or "weights_only" in first or "safe_globals" in first:
        return type(error).__name__
    return first


def read_network(data: bytes, config: NetworkConfig, members: int) -> Ensemble:
    """The ensemble, built only once every tensor in ``weights.pt`` has the shape ``config`` gives it."""
    check_zip(data, WEIGHTS)
    try:
        state = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as error:  # objects a weights-only load refuses: never to be loaded another way
        raise Invalid(
            f"`{WEIGHTS}` holds objects other than tensors ({torch_reason(error)}); it was not written by `save`, "
            "and `load` never runs code from a model file."
        ) from None
    except Exception as error:  # noqa: BLE001 - any failure here means an unusable file
        raise Invalid(f"Could not load `{WEIGHTS}` ({torch_reason(error)}).") from None
    if not isinstance(state, dict) or not all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items()):
        raise Invalid(f"`{WEIGHTS}` must hold a mapping of parameter names to tensors.")
    template = {name: tensor.shape for name, tensor in _template(config).state_dict().items()}
    found = {key.split(".")[1] for key in state if key.startswith("members.") and key.count(".") >= 2}
    if len(found) != members:
        raise Invalid(f"`fitted.n_members` in {CONFIG} is {members}, but `{WEIGHTS}` holds {len(found)} member(s).")
    expected = {f"members.{k}.{name}": shape for k in range(members) for name, shape in template.items()}
    missing, extra = sorted(set(expected) - set(state)), sorted(set(state) - set(expected))
    if missing or extra:
        raise Invalid(
            f"`{WEIGHTS}` does not hold the network `fitted.network` in {CONFIG} describes "
            f"(missing {show(missing)}, unexpected {show(extra)})."
        )
    for key, shape in expected.items():
        tensor = state[key]
        if tensor.shape != shape or not tensor.is_floating_point():
            raise Invalid(
                f"`{key}` in `{WEIGHTS}` is {tensor.dtype} of shape {tuple(tensor.shape)}, but `fitted.network` in "
                f"{CONFIG} gives a float tensor of shape {tuple(shape)}."
            )
    network = Ensemble(config, members)
    network.load_state_dict(state)
    network.eval()
    return network
