"""Where a warning should point: at the user's line, the first frame outside the package.

A warning raised deep inside a fit (a date column's note, a calibration's) has no fixed depth below the user's call:
the same check runs under ``fit``, ``backtest``, ``predict`` and the command line. A fixed ``stacklevel`` pointed
inside the package on some of those paths; this one counts the frames.
"""

from __future__ import annotations

import os
import sys
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
