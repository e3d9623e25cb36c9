"""The Theta method's forecast of each series, blended into the network's forecast.

A fixed-weight combination of a global network with a per-series statistical model is
more accurate than either alone on the validation folds of M3 monthly and Tourism
quarterly (benchmarks/README.md): the network is weakest in the first horizon steps,
where a local level fitted to the series' own history is strongest. The Theta method
(the model of statsforecast's ``Theta``: seasonally adjusted simple exponential smoothing
with half the linear drift) is the cheapest such model that helped; it is fitted on all
series at once (``standard_theta.py``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .standard_theta import standard_theta_forecasts

# The Theta method needs more observations than its three burn-in periods (statsforecast refuses fewer).
THETA_MIN_OBSERVATIONS = 4
# Weight of the Theta forecast when ``theta_weight`` is None and the model has no
# future-known covariates; chosen on the validation folds (benchmarks/README.md).
DEFAULT_THETA_WEIGHT = 0.25


def theta_forecasts(
    y: np.ndarray, first_col: np.ndarray, last_col: int, horizon: int, season_length: int, history: int
) -> np.ndarray:
    """Theta forecasts (N, horizon) from the last ``history`` periods up to ``last_col`` of each row of ``y``.

    ``y`` is the padded (N, W) target array; columns before ``first_col`` are padding.
    Missing targets inside a series are filled forward, then backward (as for the
    statsforecast baselines). Rows with fewer than ``THETA_MIN_OBSERVATIONS`` observed
    periods, or whose forecast is not finite, get NaN, so the caller can fall back to the
    network alone for them.
    """
    out = np.full((y.shape[0], horizon), np.nan)
    history = min(history, last_col + 1)
    cols = np.arange(last_col - history + 1, last_col + 1)
    window = y[:, cols]
    inside = cols[None, :] >= first_col[:, None]
    observed = (inside & np.isfinite(window)).sum(axis=1)
    usable = np.flatnonzero(observed >= THETA_MIN_OBSERVATIONS)
    if len(usable) == 0:
        return out
    filled = pd.DataFrame(np.where(inside, window, np.nan)[usable]).ffill(axis=1).bfill(axis=1).to_numpy()
    start = np.clip(first_col[usable] - cols[0], 0, None)
    lengths = history - start
    columns = np.minimum(start[:, None] + np.arange(history)[None, :], history - 1)
    left_aligned = np.take_along_axis(filled, columns, axis=1)
    with np.errstate(all="ignore"):
        means = standard_theta_forecasts(left_aligned, lengths, horizon, season_length)
    means[~np.isfinite(means).all(axis=1)] = np.nan
    out[usable] = means
    return out


def blend_quantiles(values: np.ndarray, theta: np.ndarray, weight: float, median_index: int) -> np.ndarray:
    """Shift every quantile (N, H, Q) so the median becomes ``(1 - weight) * median + weight * theta``.

    The interval keeps the network's width and moves with the median. Series whose Theta
    forecast is NaN keep the network's forecast unchanged.
    """
    shift = weight * (theta - values[:, :, median_index])
    return values + np.where(np.isfinite(shift), shift, 0.0)[:, :, None]
