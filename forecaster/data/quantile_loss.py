"""The weighted quantile loss (WQL): the one definition behind the backtest's score and a fit's held-out choices.

WQL is the mean over levels of ``2 * sum(pinball loss) / sum(|y|)`` (GluonTS's mean weighted quantile loss, as
Chronos, fev and GIFT-Eval report it over the levels 0.1, ..., 0.9). Its two kernels live here:
:func:`pinball` (each forecast's loss at its level) and :func:`level_loss` (a level's sums turned into its
loss). ``evaluation.metrics`` pools the sums of a backtest's rows per model and level, then averages the levels;
``model.calibration`` pools a fit's held-out windows, keeping each window's share of the whole for its paired
t-statistics. Both call these kernels, so the loss itself is defined once.
"""

from __future__ import annotations

import numpy as np


def pinball(error: np.ndarray, level) -> np.ndarray:
    """The pinball loss of forecasts at ``level`` whose actuals exceed them by ``error`` (elementwise)."""
    return np.maximum(level * error, (level - 1.0) * error)


def level_loss(pinball_sum: np.ndarray, abs_actual_sum) -> np.ndarray:
    """``2 * pinball_sum / abs_actual_sum``: the loss of pooled pinball sums; NaN where ``sum(|y|)`` is not positive."""
    positive = np.asarray(abs_actual_sum) > 0
    return np.where(positive, 2.0 * pinball_sum / np.where(positive, abs_actual_sum, 1.0), np.nan)
