"""The schemas of ``config.json`` and ``manifest.json``: required keys, types, allowed values and size bounds.

``load`` checks a parsed file against them before it reads anything else from it, so a file that breaks
them is refused with the key at fault named, and nothing is allocated from values out of bounds.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pandas as pd

from ..data.features import allowed_dtype
from ..data.scaling import SCALERS
from .attention import ATTENTIONS
from .calibration import MAX_FACTOR, TREATMENTS
from .config_checks import (
    Check,
    anything,
    flag,
    integer,
    list_of,
    mapping,
    must_be,
    nullable,
    param_value,
    real,
    record,
    scalar,
    sha256,
    text,
    typed_index,
    typed_value,
)
from .file_layout import (
    CONFIG,
    FORMAT_VERSION,
    HISTORY,
    MAX_FEATURES,
    MAX_HIDDEN,
    MAX_LAYERS,
    MAX_MEMBERS,
    MAX_QUANTILES,
    MAX_SERIES,
    MAX_STEPS,
    WEIGHTS,
    Invalid,
)
from .network import NetworkConfig
from .params import CONSTRAINTS

ENCODINGS = ("numpy", "datetime_tz", "str", "typed", "category")


def column_encoding(value: Any, where: str, nested: bool = False) -> None:
    """How one history column is stored in ``history.npz`` (see :func:`.history_file.encode_column`)."""
    kinds = tuple(k for k in ENCODINGS if not (nested and k == "category"))
    record({"kind": (text(*kinds), True), "dtype": (text(), False), "ordered": (flag, False), "categories": (anything, False)})(
        value, where
    )
    kind = value["kind"]
    needed = {"kind", "ordered", "categories"} if kind == "category" else {"kind", "dtype"}
    if set(value) != needed:
        raise Invalid(f"`{where}` in {CONFIG} of kind {kind!r} must have exactly the keys {sorted(needed)}.")
    if kind == "category":
        column_encoding(value["categories"], f"{where}.categories", nested=True)
        return
    try:
        dtype = allowed_dtype(value["dtype"])
    except ValueError as error:
        raise must_be(f"{where}.dtype", f"a dtype a model file holds ({error})", value["dtype"]) from None
    numpy = isinstance(dtype, np.dtype) and dtype.kind in "biufMm"
    fits = {
        "numpy": numpy,
        "datetime_tz": isinstance(dtype, pd.DatetimeTZDtype),
        "str": not numpy and not isinstance(dtype, (pd.CategoricalDtype, pd.DatetimeTZDtype)),
        "typed": not numpy and not isinstance(dtype, (pd.CategoricalDtype, pd.DatetimeTZDtype)),
    }
    if not fits[kind]:
        raise must_be(f"{where}.dtype", f"a dtype that a {kind!r} column holds", value["dtype"])


# Checks of the fields of ``NetworkConfig``; a field added later without a row here is checked by its default's type.
NETWORK_FIELDS: dict[str, Check] = {
    "input_size": integer(1, MAX_STEPS),
    "horizon": integer(1, MAX_STEPS),
    "past_features": integer(0, MAX_FEATURES),
    "future_features": integer(0, MAX_FEATURES),
    "static_features": integer(0, MAX_FEATURES),
    "n_outputs": integer(1, MAX_QUANTILES),
    "median_index": integer(0, MAX_QUANTILES - 1),
    "hidden_size": integer(1, MAX_HIDDEN),
    "num_layers": integer(1, MAX_LAYERS),
    "dropout": real(0.0, 1.0, high_open=True),
    "cell": text("gru", "lstm"),
    "attention": text(*ATTENTIONS),
    "skip": flag,
    "values": text("states", "observations"),
    "seasonal_channels": integer(0, MAX_FEATURES),
    "trend_channels": integer(0, MAX_FEATURES),
}


def network_schema() -> Check:
    """``fitted.network``: the fields of ``NetworkConfig``; those with a default may be missing (files from before them)."""
    by_type: dict[Any, Check] = {bool: flag, int: integer(0, MAX_FEATURES), float: real(), str: text()}
    fields = {}
    for spec in dataclasses.fields(NetworkConfig):
        fallback = by_type.get(type(spec.default), anything)
        fields[spec.name] = (NETWORK_FIELDS.get(spec.name, fallback), spec.default is dataclasses.MISSING)
    return record(fields)


V1_KINDS = ("datetime", "bool", "int", "float", "str")


def config_schema(version: int) -> Check:
    """The schema of ``config.json``: keys, types, allowed values and size bounds. Format 1 lacks some fields."""
    new = version >= 2
    network = network_schema()
    names = list_of(text(), MAX_FEATURES)
    scaling = record({"mean": (real(), True), "std": (real(0.0, math.inf, low_open=True), True)})
    features = record(
        {
            "numeric": (mapping(scaling, MAX_FEATURES), True),
            "categories": (mapping(list_of(typed_value if new else scalar, MAX_FEATURES), MAX_FEATURES), True),
        }
    )
    if new:
        column = record({"name": (text(), True), "encoding": (column_encoding, True)})
        history_columns = list_of(column, MAX_FEATURES + 3)
    else:
        history_columns = mapping(text(*V1_KINDS), MAX_FEATURES + 3)
    training_end = record(
        {
            "ids": (typed_index if new else list_of(scalar, MAX_SERIES), True),
            "ds": (list_of(text(), MAX_SERIES), True),
            "name": (nullable(text()), False),
        }
    )
    factors = list_of(list_of(real(0.0, MAX_FACTOR), MAX_QUANTILES), MAX_STEPS)
    calibration = record(
        {
            "blend": (mapping(real(0.0, 1.0), MAX_FEATURES), True),
            "factors": (nullable(factors), True),
            "n_windows": (integer(0, 2**31), True),
            "shape": (real(0.0, 1.0), False),
            "treatment": (nullable(text(*TREATMENTS)), False),
            "held_out_wql": (mapping(real(0.0, math.inf), 8), False),
        }
    )
    fitted = record(
        {
            "freq": (text(), True),
            "season_length": (integer(1, MAX_STEPS), True),
            "input_size": (integer(1, MAX_STEPS), True),
            "roles": (record({"future": (names, True), "past": (names, True), "static": (names, True)}), True),
            "features": (features, True),
            "quantiles": (list_of(real(0.0, 1.0, low_open=True, high_open=True), MAX_QUANTILES), True),
            "network": (network, True),
            "n_members": (integer(1, MAX_MEMBERS), new),
            "tz": (nullable(text()), True),
            "history_columns": (history_columns, True),
            "training_end": (training_end, True),
            "scaler": (text(*SCALERS), new),
            "log_target": (flag, new),
            "seasonal_profile": (flag, new),
            "trend_line": (flag, new),
            "warm_starts": (integer(0, 2**31), new),
            "calibration": (nullable(calibration), False),
        }
    )
    top: dict[str, tuple[Check, bool]] = {
        "format_version": (integer(1, FORMAT_VERSION), True),
        "forecaster_version": (text(), True),
        "params": (mapping(param_value, 10 * len(CONSTRAINTS)), True),
        "fitted": (fitted, True),
    }
    if not new:
        top["sha256"] = (record({WEIGHTS: (sha256, True), HISTORY: (sha256, True)}), True)
    return record(top)


MANIFEST_SCHEMA = record(
    {
        "format_version": (integer(2, 2**31), True),
        "sha256": (record({name: (sha256, True) for name in (CONFIG, WEIGHTS, HISTORY)}), True),
    }
)
