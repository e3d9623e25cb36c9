"""Progress of long backtests: a bar on a terminal, plain lines in a log file, nothing when asked for quiet.

Bars redraw in place with escape codes, which a log file keeps as noise (nested bars leave ``[A``
sequences), so when standard error is not a terminal each step is reported once, as one line.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import TextIO

from tqdm.auto import tqdm


def is_terminal(stream: TextIO | None = None) -> bool:
    """Whether ``stream`` (default standard error) is an interactive terminal."""
    stream = sys.stderr if stream is None else stream
    return bool(getattr(stream, "isatty", lambda: False)())


class Progress:
    """Reports folds and the steps inside them (fitting, partners, baselines, the report)."""

    def __init__(self, enabled: bool, total: int, what: str = "backtest", stream: TextIO | None = None):
        self.enabled, self.total, self.what = enabled, total, what
        self.stream = sys.stderr if stream is None else stream
        self.bar = tqdm(total=total, desc=what, file=self.stream) if enabled and is_terminal(self.stream) else None
        self.started = time.perf_counter()
        self.fold = 0

    def folds(self, items: Iterable) -> Iterator:
        """Iterate over folds, counting them."""
        for self.fold, item in enumerate(items, start=1):
            yield item
            if self.bar is not None:
                self.bar.update(1)
        self.close()

    def step(self, message: str) -> None:
        """Announce a step of the current fold (on the bar, or as one plain line)."""
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.set_postfix_str(message)
        else:
            elapsed = time.perf_counter() - self.started
            print(f"[{self.what} {elapsed:6.0f} s] fold {self.fold}/{self.total}: {message}", file=self.stream, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
