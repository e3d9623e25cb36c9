"""The schemas of ``config.json`` and ``manifest.json``, and the composable checks they are built from.

A check takes ``(value, where)`` and raises :class:`~forecaster.model.files.layout.Invalid` naming ``where``, the
dotted key in ``config.json``, when the value breaks it: integers and reals in bounds, flags, texts, lists, objects
with known keys. ``load`` checks a parsed file against the schemas before it reads anything else from it, so a file
that breaks them is refused with the key at fault named, and nothing is allocated from values out of bounds.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ..._version import __version__
from ...data.features import allowed_dtype, from_typed, index_from_typed
from ...data.scaling import SCALERS
from ...data.seen_values import MAX_CODES
from ..attention import ATTENTIONS
from ..calibration import TREATMENTS
from ..closures import MAX_CLOSED_VALUES
from ..intervals import MAX_FACTOR
from ..network import NetworkConfig
from ..params import CONSTRAINTS, MAX_HIDDEN, MAX_LAYERS, MAX_MEMBERS, MAX_QUANTILES, MAX_STEPS
from ..resolve import FLOOR_RULES
from ..state import INIT_PATHS, PLAN_BUDGETS, PLAN_STARTS
from .layout import (
    CONFIG,
    FORMAT_VERSION,
    HISTORY,
    MAX_FEATURES,
    MAX_SERIES,
    WEIGHTS,
    Invalid,
    show,
)

# A check takes (value, where) and raises Invalid naming ``where`` (the dotted key) when the value breaks it.
Check = Callable[[Any, str], None]


def join(where: str, key: Any) -> str:
    return f"{where}.{key}" if where else str(key)


def must_be(where: str, must: str, value: Any) -> Invalid:
    return Invalid(f"`{where}` in {CONFIG} must be {must}; got {show(value)}.")


def integer(low: int, high: int) -> Check:
    def check(value: Any, where: str) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise must_be(where, f"an integer in [{low}, {high}]", value)

    return check


def real(low: float = -math.inf, high: float = math.inf, low_open: bool = False, high_open: bool = False) -> Check:
    bounds = f"{'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"
    must = "a finite number" if (low, high) == (-math.inf, math.inf) else f"a number in {bounds}"

    def check(value: Any, where: str) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise must_be(where, must, value)
        if value < low or value > high or (low_open and value == low) or (high_open and value == high):
            raise must_be(where, must, value)

    return check


def flag(value: Any, where: str) -> None:
    if not isinstance(value, bool):
        raise must_be(where, "true or false", value)


def text(*allowed: str) -> Check:
    def check(value: Any, where: str) -> None:
        if not isinstance(value, str) or value == "" or (allowed and value not in allowed):
            raise must_be(where, f"one of {allowed}" if allowed else "a non-empty string", value)

    return check


def nullable(inner: Check) -> Check:
    def check(value: Any, where: str) -> None:
        if value is not None:
            inner(value, where)

    return check


def list_of(item: Check, most: int) -> Check:
    def check(value: Any, where: str) -> None:
        if not isinstance(value, list) or len(value) > most:
            raise must_be(where, f"a list of at most {most} items", value)
        for i, element in enumerate(value):
            item(element, f"{where}[{i}]")

    return check


def mapping(item: Check, most: int) -> Check:
    def check(value: Any, where: str) -> None:
        if not isinstance(value, dict) or len(value) > most:
            raise must_be(where, f"an object of at most {most} entries", value)
        for key, element in value.items():
            item(element, join(where, key))

    return check


def record(fields: dict[str, tuple[Check, bool]]) -> Check:
    """An object with these keys only; ``True`` marks the required ones."""

    def check(value: Any, where: str) -> None:
        if not isinstance(value, dict):
            raise must_be(where, "an object", value)
        unknown = [key for key in value if key not in fields]
        if unknown:
            raise Invalid(f"`{join(where, unknown[0])}` in {CONFIG} is not a key this forecaster ({__version__}) knows.")
        for key, (inner, required) in fields.items():
            if key in value:
                inner(value[key], join(where, key))
            elif required:
                raise Invalid(f"`{join(where, key)}` is missing from {CONFIG}.")

    return check


def scalar(value: Any, where: str) -> None:
    if not isinstance(value, (str, int, float, bool)):
        raise must_be(where, "a string, number or boolean", value)


def typed_value(value: Any, where: str) -> None:
    try:
        from_typed(value)
    except ValueError as error:
        raise must_be(where, f"a typed value ({error})", value) from None


def typed_index(value: Any, where: str) -> None:
    if not isinstance(value, dict) or not isinstance(value.get("values"), list) or len(value["values"]) > MAX_SERIES:
        raise must_be(where, f"a typed index of at most {MAX_SERIES} labels", value)
    try:
        index_from_typed(value)
    except ValueError as error:
        raise must_be(where, f"a typed index ({error})", value) from None


def sha256(value: Any, where: str) -> None:
    if not isinstance(value, str) or len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
        raise must_be(where, "a SHA-256 in hexadecimal", value)


def param_value(value: Any, where: str) -> None:
    """A parameter in JSON: a scalar, null, a list of scalars, or (``closed_when`` only) a mapping of names to
    either; ``check_params`` then applies its own table."""
    if isinstance(value, dict) and where.endswith(".closed_when"):
        for key, element in value.items():
            text()(key, join(where, "keys"))
            param_value([element] if not isinstance(element, list) else element, join(where, key))
    elif isinstance(value, list):
        for i, element in enumerate(value):
            scalar(element, f"{where}[{i}]")
    elif value is not None:
        scalar(value, where)


def anything(value: Any, where: str) -> None:
    """Checked by the caller."""


ENCODINGS = ("numpy", "datetime_tz", "str", "typed", "category")


def column_encoding(value: Any, where: str, nested: bool = False) -> None:
    """How one history column is stored in ``history.npz`` (see :func:`.codec.encode_column`)."""
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


def plan_schema() -> Check:
    """The fit plan a model file saves (``forecaster.model.plan.FitPlan.to_dict``)."""
    units = record(
        {
            "input_size": (integer(1, MAX_STEPS), True),
            "season_length": (integer(1, MAX_STEPS), True),
            **{name: (flag, True) for name in ("log_target", "seasonal_profile", "trend_line")},
            "partner_week": (integer(0, MAX_STEPS), False),
        }
    )
    return record(
        {
            "start": (text(*PLAN_STARTS), True),
            "prior": (nullable(text()), True),
            "freq": (text(), True),
            "units": (units, True),
            "quantiles": (list_of(real(0.0, 1.0, low_open=True, high_open=True), MAX_QUANTILES), True),
            "n_members": (integer(1, MAX_MEMBERS), True),
            "seeds": (list_of(integer(0, 2**63), MAX_MEMBERS), True),
            "budget": (text(*PLAN_BUDGETS), True),
            "max_steps": (nullable(integer(0, 2**31)), True),
            "early_stopping": (nullable(flag), True),
            "learning_rate": (real(0.0, math.inf, low_open=True), True),
            "prior_rate_share": (nullable(real(0.0, 1.0, low_open=True)), True),
            "calibrate": (flag, True),
            "warm_starts": (integer(0, 2**31), True),
            "notes": (list_of(text(), 64), True),
            "prior_check": (flag, False),
            "step_cap": (integer(1, 2**31), False),
            "screen": (flag, False),
            "covariates_read": (flag, False),
            "unread": (list_of(text(), MAX_FEATURES), False),
            "check": (nullable(mapping(real(), 16)), False),
        }
    )


def config_schema(version: int) -> Check:
    """The schema of ``config.json``: keys, types, allowed values and size bounds. Format 1 lacks some fields."""
    new = version >= 2
    network = network_schema()
    names = list_of(text(), MAX_FEATURES)
    scaling = record(
        {
            "mean": (real(), True),
            "std": (real(0.0, math.inf, low_open=True), True),
            **{name: (nullable(real()), False) for name in ("low", "high")},
            "codes": (nullable(list_of(real(), MAX_CODES)), False),
        }
    )
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
            "init": (nullable(text(*INIT_PATHS)), False),
            "plan": (nullable(plan_schema()), False),
            "nonnegative": (text(*FLOOR_RULES), False),
            "closed_when": (mapping(list_of(real(), MAX_CLOSED_VALUES), MAX_FEATURES), False),
            "partner_week": (integer(0, MAX_STEPS), False),
            "partners_follow_covariates": (flag, False),
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
