"""Each distinct warning of a long run said once, instead of once per fold.

A backtest fits and forecasts once per fold, and every fit repeats the warnings of its data ("1 of 6 series have less
history than input_size", a partner's note): a backtest of four folds printed one of them eight times, attributed to
a line inside the package. The run's warnings are collected, and each distinct one is issued once when it ends,
under the caller's warning filters, with the module it came from (so filters by module keep working): the package's
own at the caller's line, any other (a library's) at its own line.
"""

from __future__ import annotations

import functools
import os
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ..callers import in_package

T = TypeVar("T")


def _module_of(filename: str) -> str:
    """The dotted module name of a source file on ``sys.path`` (``torch.nn.modules.rnn``), as ``warnings.warn`` would
    have matched filters against; the file's name without ``.py`` when it is on none."""
    resolved = str(Path(filename).resolve()) if filename else ""
    for root in sorted((str(Path(p).resolve()) for p in sys.path if p), key=len, reverse=True):
        if resolved.startswith(root + os.sep):
            dotted = resolved[len(root) + 1 :].removesuffix(".py").replace(os.sep, ".")
            return dotted.removesuffix(".__init__")
    return Path(filename).stem


def each_warning_once(function: Callable[..., T]) -> Callable[..., T]:
    """``function`` with each distinct (category, message) it warns issued once, when it returns or raises.

    Where it raises, a warning that the caller's filters turn into an error does not replace that exception.
    """

    @functools.wraps(function)
    def once(*args, **kwargs) -> T:
        caller = sys._getframe(1)
        records: list[warnings.WarningMessage] = []
        failed = True
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    result = function(*args, **kwargs)
                finally:
                    records = list(caught)
            failed = False
            return result
        finally:
            seen = set()
            for record in records:
                key = (record.category, str(record.message))
                if key in seen:
                    continue
                seen.add(key)
                ours = in_package(record.filename)
                where = (caller.f_code.co_filename, caller.f_lineno) if ours else (record.filename, record.lineno)
                try:
                    warnings.warn_explicit(record.message, record.category, *where, module=_module_of(record.filename))
                except Warning:
                    if not failed:
                        raise
                    # an error filter met a warning of a run that failed: its own exception is the one to see

    return once
