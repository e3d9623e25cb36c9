"""The interval factors: each quantile's offset from the median scaled, per horizon step, to its hit rate on held-out
windows (a conformal adjustment, unitless, so series on every scale pool).

``model.calibration`` learns them on a fit's held-out windows (``offset_factors``) and scores them out of sample;
``model.inference`` applies them to every forecast (``apply_factors``). The median never moves.
"""

from __future__ import annotations

import numpy as np

from ..callers import silenced

# Residuals behind each factor: a step pools its neighbours until it has this many.
MIN_PER_STEP = 300
# Series behind the held-out windows below which the pairs of levels share one factor (``offset_factors``).
MIN_SHIFT_SERIES = 30
# A factor never stretches an offset more than this (offsets near zero give wild ratios).
MAX_FACTOR = 20.0


def offset_factors(
    quantiles: np.ndarray, actual: np.ndarray, levels: tuple[float, ...], median_index: int, n_series: int | None = None
) -> np.ndarray:
    """(H, Q) factors that give each level its hit rate on held-out windows, once their shared shift is taken out.

    ``n_series``: how many series the windows come from. Below ``MIN_SHIFT_SERIES`` a shift shared
    across series cannot be told from the series' own errors, and a factor per level is read off too
    few independent errors: the pairs of mirrored levels then share one factor (``pair_factors``).

    ``quantiles`` (B, H, Q) are blended forecasts, ``actual`` (B, H). The held-out windows share
    their periods, so a shock common to them (every series falling below its forecast at the end
    of the data) moves all their actuals one way; factors fitted to that would tilt every interval
    toward it. So each step's median shift of the actuals from the median forecast, in units of
    the outermost interval's width, is taken out first: what is left is the shape of the errors.
    Then a forecast ``median + c * offset`` of a level above the median is hit (the actual at or
    below it) when ``(y - median) / offset <= c``, so ``c`` is that ratio's ``level``-quantile;
    below the median the offset is negative and ``c`` is the ``1 - level`` quantile. Each factor
    is read from its step's residuals and its neighbours' (``_quantile_by_step``).
    """
    if n_series is not None and n_series < MIN_SHIFT_SERIES:
        return pair_factors(quantiles, actual, levels, median_index)
    median = quantiles[:, :, median_index]
    offsets = quantiles - median[..., None]
    width = offsets.max(axis=2) - offsets.min(axis=2)
    error = np.where(np.isfinite(actual) & (width > 0), (actual - median) / np.where(width > 0, width, 1.0), np.nan)
    with silenced(RuntimeWarning):  # a step without residuals has no shift
        shift = np.nan_to_num(np.nanmedian(error, axis=0))  # (H,)
    centred = actual - shift[None, :] * width
    factors = np.ones((quantiles.shape[1], quantiles.shape[2]))
    for q, level in enumerate(levels):  # a handful of levels
        if q == median_index:
            continue
        factors[:, q] = _level_factor(centred, median, offsets[:, :, q], level)
    return np.clip(factors, 0.0, MAX_FACTOR)


def capped_note(factors: np.ndarray | None) -> str | None:
    """A warning's words where factors (H, Q) reached ``MAX_FACTOR``: the intervals are then likely still too narrow."""
    if factors is None:
        return None
    capped = int((factors >= MAX_FACTOR).any(axis=1).sum())
    if not capped:
        return None
    return (
        f"The intervals' calibration stretched the network's quantiles to its cap ({MAX_FACTOR:g} times their offset "
        f"from the median) at {capped} of {len(factors)} horizon steps: on the held-out windows they were far narrower "
        "than the errors, so the intervals are likely still too narrow there. A network trained longer (a larger "
        "`max_steps`, or None for the default budget) learns wider quantiles."
    )


def pair_factors(quantiles: np.ndarray, actual: np.ndarray, levels: tuple[float, ...], median_index: int) -> np.ndarray:
    """(H, Q) factors that give each central interval its nominal coverage on held-out windows (few series).

    ``quantiles`` (B, H, Q) are blended forecasts, ``actual`` (B, H). Levels pair up around the
    median (0.1 with 0.9, ...; a level without its mirror pairs with itself): the interval
    ``median + c * offset`` of a pair holds an actual when ``c`` is at least the actual's distance
    from the median in units of the offset on its side, so ``c`` is that distance's quantile at
    the interval's nominal coverage. One factor per pair keeps the interval centred on the
    median: a shock shared by the held-out periods (a downturn at the end of the data) widens
    the interval rather than tilting it. Each factor is read from its step's residuals and its
    neighbours' (``_quantile_by_step``).
    """
    median = quantiles[:, :, median_index]
    offsets = quantiles - median[..., None]
    horizon, n_levels = quantiles.shape[1], quantiles.shape[2]
    factors = np.ones((horizon, n_levels))
    above = actual >= median
    for q, level in enumerate(levels):  # a handful of levels
        if q == median_index:
            continue
        mirror = min(range(n_levels), key=lambda k: abs(levels[k] - (1.0 - level)))
        if abs(levels[mirror] - (1.0 - level)) > 1e-9 or mirror == median_index:
            # No mirror: the level alone, hit when (y - median) / offset is at most c (at least c below the median).
            factors[:, q] = _level_factor(actual, median, offsets[:, :, q], level)
            continue
        upper, lower = (q, mirror) if level > 0.5 else (mirror, q)
        side = np.where(above, offsets[:, :, upper], offsets[:, :, lower])
        usable = np.isfinite(actual) & (np.abs(side) > 0) & (offsets[:, :, upper] >= 0) & (offsets[:, :, lower] <= 0)
        distance = np.where(usable, (actual - median) / np.where(usable, side, 1.0), np.nan)
        if usable.any():
            factors[:, q] = _quantile_by_step(distance, abs(levels[upper] - levels[lower]))
    return np.clip(factors, 0.0, MAX_FACTOR)


def _level_factor(actual: np.ndarray, median: np.ndarray, offset: np.ndarray, level: float) -> np.ndarray:
    """(H,) the factor that gives one level its hit rate: ``median + c * offset`` is hit when ``(y - median) / offset <= c``.

    Below the median the offset is negative, so the hit rate is the share of ratios at least ``c``:
    ``c`` is the ratios' ``1 - level`` quantile there. 1 where no window has an offset on the level's side.
    """
    side = 1.0 if level > 0.5 else -1.0
    usable = np.isfinite(actual) & (side * offset > 0)
    if not usable.any():
        return np.ones(offset.shape[1])
    ratio = np.where(usable, (actual - median) / np.where(usable, offset, 1.0), np.nan)
    return _quantile_by_step(ratio, level if level > 0.5 else 1.0 - level)


def _quantile_by_step(ratio: np.ndarray, level: float) -> np.ndarray:
    """(H,) the ``level``-quantile of the finite ratios (B, H) of each step and its nearest steps.

    Each step pools the steps within the smallest distance that gives ``MIN_PER_STEP`` residuals,
    so a factor follows the horizon where the data allow and is never read off a handful of points.
    """
    horizon, windows = ratio.shape[1], ratio.shape[0]
    # Split conformal's finite-sample level, with the window (not the period) as the exchangeable unit:
    # a window's steps move together, so 14 windows of 14 days are 14 observations, not 196.
    corrected = np.ceil((windows + 1) * level) / windows
    # Too few windows for a finite conformal bound: the largest ratio, and never narrower than the network's own.
    floor = 1.0 if corrected > 1.0 else 0.0
    corrected = min(corrected, 1.0)
    counts = np.isfinite(ratio).sum(axis=0)
    out = np.empty(horizon)
    for step in range(horizon):  # once per fit, over at most a few hundred steps
        for width in range(horizon):
            lo, hi = max(0, step - width), min(horizon, step + width + 1)
            if counts[lo:hi].sum() >= MIN_PER_STEP or (lo == 0 and hi == horizon):
                break
        values = ratio[:, lo:hi]
        out[step] = max(floor, np.quantile(values[np.isfinite(values)], corrected))
    return out


def apply_factors(quantiles: np.ndarray, factors: np.ndarray | None, median_index: int) -> np.ndarray:
    """Quantiles (B, H, Q) with each offset from the median scaled by ``factors`` (H, Q), kept in order around it."""
    if factors is None:
        return quantiles
    median = quantiles[:, :, median_index : median_index + 1]
    out = median + factors[None] * (quantiles - median)
    out[:, :, :median_index] = np.minimum(out[:, :, :median_index], median)
    out[:, :, median_index + 1 :] = np.maximum(out[:, :, median_index + 1 :], median)
    return np.sort(out, axis=2)  # the median stays in place: every level below it is at most it, every one above at least
