"""Each distinct warning of a long run said once, to its caller, instead of once per fold.

A backtest fits and forecasts once per fold, and every fit repeats the warnings of its data ("1 of 6 series have less
history than input_size", a partner's note): a backtest of four folds printed one of them eight times, attributed to
a line inside the package. The run's warnings are collected and each distinct one is issued once at its end, at the
caller's line, under the caller's own warning filters.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def each_warning_once(function: Callable[..., T]) -> Callable[..., T]:
    """``function`` with each distinct (category, message) it warns issued once, when it returns or raises."""

    @functools.wraps(function)
    def once(*args, **kwargs) -> T:
        records: list[warnings.WarningMessage] = []
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    return function(*args, **kwargs)
                finally:
                    records = list(caught)
        finally:
            seen = set()
            for record in records:
                key = (record.category, str(record.message))
                if key not in seen:
                    seen.add(key)
                    warnings.warn(record.message, stacklevel=2)

    return once
