"""Where a warning should point (at the user's line, the first frame outside the package), and where the package's
own warnings about the data stay quiet (work on a worker that repeats what the client has said).

A warning raised deep inside a fit (a date column's note, a calibration's) has no fixed depth below the user's call:
the same check runs under ``fit``, ``backtest``, ``predict`` and the command line. A fixed ``stacklevel`` pointed
inside the package on some of those paths; this one counts the frames.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import warnings
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path

_PACKAGE = str(Path(__file__).resolve().parent) + os.sep


def in_package(filename: str) -> bool:
    """Whether the source file ``filename`` is one of the package's own modules."""
    return bool(filename) and str(Path(filename).resolve()).startswith(_PACKAGE)


def user_stacklevel() -> int:
    """The ``stacklevel`` for a ``warnings.warn`` made by the function that calls this one, so that the warning is
    attributed to the first frame outside the package (the outermost frame where every frame is inside it)."""
    frame, level = sys._getframe(1), 1  # the warning's own function is level 1
    while frame is not None and in_package(frame.f_code.co_filename):
        frame, level = frame.f_back, level + 1
    return level if frame is not None else level - 1


# Set within ``quiet()``: per thread and task, so a worker thread's quiet block leaves every other thread's warnings.
_QUIET: ContextVar[bool] = ContextVar("forecaster_quiet", default=False)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Within the block, :func:`warn_user` says nothing: for work that repeats what has already been said (a Dask
    worker reading its partition again). Unlike ``warnings.catch_warnings``, it changes no process-wide filter, so
    blocks in concurrent threads cannot leave warnings switched off for the whole process (Python 3.11's
    ``catch_warnings`` restores whichever filters its thread saw on entry)."""
    token = _QUIET.set(True)
    try:
        yield
    finally:
        _QUIET.reset(token)


def warn_user(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn`` at the user's line (:func:`user_stacklevel`), unless within :func:`quiet`."""
    if not _QUIET.get():
        warnings.warn(message, category, stacklevel=user_stacklevel())


# Held by every ``silenced`` block: one at a time across threads (re-entrant within one).
_FILTERS = threading.RLock()


@contextlib.contextmanager
def silenced(*categories: type[Warning]) -> Iterator[None]:
    """``warnings.catch_warnings`` with ``categories`` ignored (every warning without any), one block at a time
    across threads. Python 3.11's ``catch_warnings`` restores the filters its thread saw on entry, so two blocks
    overlapping in concurrent threads (a Dask worker's partitions, on the threaded scheduler) could leave warnings
    switched off for the whole process. For short blocks whose body waits on no other thread."""
    with _FILTERS, warnings.catch_warnings():
        for category in categories or (Warning,):
            warnings.simplefilter("ignore", category)
        yield
