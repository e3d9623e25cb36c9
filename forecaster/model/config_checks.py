"""Composable checks of parsed JSON: integers and reals in bounds, flags, texts, lists, objects with known keys.

A check takes ``(value, where)`` and raises :class:`Invalid` naming ``where``, the dotted key in
``config.json``, when the value breaks it. ``file_schema`` builds the schemas of the model files from them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .._version import __version__
from ..data.features import from_typed, index_from_typed
from .file_layout import CONFIG, MAX_SERIES, Invalid, show

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
    """A parameter in JSON: a scalar, null or a list of scalars (``check_params`` then applies its own table)."""
    if isinstance(value, list):
        for i, element in enumerate(value):
            scalar(element, f"{where}[{i}]")
    elif value is not None:
        scalar(value, where)


def anything(value: Any, where: str) -> None:
    """Checked by the caller."""
