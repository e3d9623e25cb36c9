"""Statistical forecasts of each series, blended into the network's forecast.

A fixed-weight combination of a global network with per-series statistical models is
more accurate than either alone on the validation folds of M3 monthly and Tourism
quarterly (benchmarks/history/rounds-07-13.md, seventh and eighth rounds): the network is weakest in the first horizon steps,
where a local level fitted to the series' own history is strongest. Two partners, both
fitted on all series at once: the Theta method (the model of statsforecast's ``Theta``,
``standard_theta.py``) and damped Holt-Winters exponential smoothing with a per-series
choice of trend or no trend (``holt_winters.py``), whose seasonal pattern evolves where
Theta's is fixed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from ..callers import silenced
from .distribution import PartnerDistribution
from .holt_winters import holt_winters_distribution
from .season import partner_history, prefers_week
from .standard_theta import standard_theta_forecasts

# The Theta method needs more observations than its three burn-in periods (statsforecast refuses fewer).
PARTNER_MIN_OBSERVATIONS = 4
# Weights of the partners when ``theta_weight`` / ``holt_winters_weight`` are None: what a fit keeps unless its
# held-out windows show a partner clearly hurting (``model.calibration.choose_blend``). Chosen on the validation suite
# (benchmarks/history/0.10.0.md, "a t bar that knows how few the series are, and the partners at 0.25"): 0.25 each against
# 0.15 moved the fourteen panels' MASE from 0.949x to 0.944x AutoETS and WQL from 0.918x to 0.913x; 0.35 did no better
# on the small panels and worse on the large ones.
DEFAULT_THETA_WEIGHT = 0.25
DEFAULT_HOLT_WINTERS_WEIGHT = 0.25
# The same for a model with future-known covariates, which the partners cannot see: a larger share dilutes what the
# network learns from them (the suite's covariate panels: MASE 3-4% worse at 0.25 than at 0.15).
COVARIATE_THETA_WEIGHT = 0.15
COVARIATE_HOLT_WINTERS_WEIGHT = 0.15
# Share of a partner's distribution in the quantile offsets from the median when the partner is
# blended in (``mix_offsets``); chosen on the validation folds (benchmarks/history/rounds-07-13.md, twelfth round).
SHAPE_WEIGHT = 0.5
# A partner's offset counts at most this many times the network's (same level and step) in the mix: a
# log-scale fit to a volatile history can put its upper quantiles at many times anything the series has seen.
MAX_PARTNER_OFFSET = 3.0
# Windows mixed at a time (``mix_offsets``): bounds the partners' (rows x steps x levels) offsets.
MIX_ROWS = 8192

# A fit returns the forecasts (N, H), or a forecast distribution whose centre they are.
Fitter = Callable[[np.ndarray, np.ndarray, int, int], "np.ndarray | PartnerDistribution"]


class Partner(NamedTuple):
    """A statistical model blended into the forecast: how reports name it, its fit, its default weight."""

    label: str
    fit: Fitter
    default_weight: float
    covariate_weight: float  # the default with future-known covariates


# Keyed by the estimator parameter that sets each partner's weight.
PARTNERS = {
    "theta_weight": Partner("the Theta method", standard_theta_forecasts, DEFAULT_THETA_WEIGHT, COVARIATE_THETA_WEIGHT),
    "holt_winters_weight": Partner(
        "damped Holt-Winters", holt_winters_distribution, DEFAULT_HOLT_WINTERS_WEIGHT, COVARIATE_HOLT_WINTERS_WEIGHT
    ),
}


def default_weights(future_covariates: bool) -> dict[str, float]:
    """Each partner's default weight: the one a fit keeps unless its held-out windows show the partner clearly hurting."""
    return {name: p.covariate_weight if future_covariates else p.default_weight for name, p in PARTNERS.items()}


class PartnerForecast(NamedTuple):
    """One partner's forecasts of B windows and, where the partner has one, its forecast distribution of each."""

    mean: np.ndarray  # (B, H), NaN where the partner has no forecast
    distribution: PartnerDistribution | None  # B rows; NaN spread where the partner has no forecast


def partner_distributions(
    fits: Sequence[Fitter],
    y: np.ndarray,
    first_col: np.ndarray,
    origins: np.ndarray,
    horizon: int,
    season_length: int,
    history: int,
    series: np.ndarray | None = None,
    week: int = 0,
) -> list[PartnerForecast]:
    """Forecasts of each of ``fits``, and distributions where a fit has them, from the last ``history`` periods to each origin.

    With ``week`` (periods per week, data finer than a day), the windows whose history prefers the week
    (``partners.season``) are fitted with it as their season, on their last ``PARTNER_WEEKS`` weeks; the others as
    without it.

    Each ``fit(left_aligned, lengths, horizon, season_length)`` is ``standard_theta_forecasts``
    or ``holt_winters_distribution``; the history is prepared once for all of them. A fit that
    returns a distribution also gives it, one row per window. ``y`` (N, W)
    is the padded target array, ``first_col`` (N,) each row's first column (columns before
    it are padding); window ``b`` reads row ``series[b]`` (default: one window per row) up
    to column ``origins[b]`` and nothing after it. Missing targets inside a series are filled forward,
    then backward (as for the statsforecast baselines). Rows with fewer than
    ``PARTNER_MIN_OBSERVATIONS`` observed periods, or whose forecast is not finite, get NaN,
    so the caller can fall back to the network alone for them.
    """
    series = np.arange(y.shape[0]) if series is None else np.asarray(series)
    origins = np.broadcast_to(np.asarray(origins), series.shape)
    if week > 0 and len(origins) > 0:
        weekly = prefers_week(y, first_col, series, origins, season_length, week)
        if weekly.any():
            parts = [
                (rows, partner_distributions(fits, y, first_col, origins[rows], horizon, m, span, series[rows]))
                for rows, m, span in (
                    (np.flatnonzero(~weekly), season_length, history),
                    (np.flatnonzero(weekly), week, max(history, partner_history(week))),
                )
            ]
            return [_stacked([(rows, out[k]) for rows, out in parts], len(series)) for k in range(len(fits))]
    outs = [PartnerForecast(np.full((len(series), horizon), np.nan), None) for _ in fits]
    if len(origins) == 0:
        return outs
    history = int(min(history, origins.max() + 1))
    cols = origins[:, None] + np.arange(1 - history, 1)[None, :]  # (B, history), may start before column 0
    window = y[series[:, None], np.maximum(cols, 0)]
    first_col = first_col[series]
    inside = cols >= first_col[:, None]
    observed = (inside & np.isfinite(window)).sum(axis=1)
    usable = np.flatnonzero(observed >= PARTNER_MIN_OBSERVATIONS)
    if len(usable) == 0:
        return outs
    filled = pd.DataFrame(np.where(inside, window, np.nan)[usable]).ffill(axis=1).bfill(axis=1).to_numpy()
    start = np.clip(first_col[usable] - cols[usable, 0], 0, None)
    lengths = history - start
    columns = np.minimum(start[:, None] + np.arange(history)[None, :], history - 1)
    left_aligned = np.take_along_axis(filled, columns, axis=1)
    for k, fit in enumerate(fits):
        with np.errstate(all="ignore"):
            result = fit(left_aligned, lengths, horizon, season_length)
        means = result.center.copy() if isinstance(result, PartnerDistribution) else result
        means[~np.isfinite(means).all(axis=1)] = np.nan
        outs[k].mean[usable] = means
        if isinstance(result, PartnerDistribution):
            spread = np.full((len(series), horizon), np.nan)
            spread[usable] = result.spread
            spread[~np.isfinite(outs[k].mean).all(axis=1)] = np.nan
            log = np.zeros(len(series), dtype=bool)
            log[usable] = result.log
            outs[k] = outs[k]._replace(distribution=PartnerDistribution(outs[k].mean, spread, log))
    return outs


def _stacked(parts: Sequence[tuple[np.ndarray, PartnerForecast]], n: int) -> PartnerForecast:
    """One partner's forecasts of ``n`` windows, from forecasts of disjoint subsets of them (their row indexes)."""
    horizon = parts[0][1].mean.shape[1]
    mean = np.full((n, horizon), np.nan)
    shaped = any(part.distribution is not None for _, part in parts)
    spread, log = np.full((n, horizon), np.nan), np.zeros(n, dtype=bool)
    for rows, part in parts:
        mean[rows] = part.mean
        if part.distribution is not None:
            spread[rows], log[rows] = part.distribution.spread, part.distribution.log
    return PartnerForecast(mean, PartnerDistribution(mean, spread, log) if shaped else None)


def blend_quantiles(
    values: np.ndarray, partners: Sequence[np.ndarray], weights: Sequence[float], median_index: int
) -> np.ndarray:
    """Shift every quantile (N, H, Q) so the median becomes ``(1 - sum w) * median + sum w_k * partner_k``.

    The interval keeps the network's width and moves with the median. Where a partner's
    forecast is NaN, its weight stays with the network.
    """
    median = values[:, :, median_index]
    shift = np.zeros_like(median)
    for forecast, weight in zip(partners, weights, strict=True):
        part = weight * (forecast - median)
        shift += np.where(np.isfinite(part), part, 0.0)
    return values + shift[:, :, None]


def mix_offsets(
    values: np.ndarray,
    partners: Sequence[PartnerForecast],
    weights: Sequence[float],
    median_index: int,
    levels: Sequence[float],
    share: float = SHAPE_WEIGHT,
) -> np.ndarray:
    """Quantiles (N, H, Q) at ``levels`` whose offsets from the median mix the network's with the blended partners' distributions.

    Each quantile's offset becomes ``(1 - share) * network offset + share * partner offset`` (the
    partners with a distribution and a positive weight, averaged), a quantile average of the two
    distributions around the blended median, which stays where it is. The network's offsets come
    from one global model scaled by each window's history; the partner's follow the series' own
    one-step error and widen with the horizon as its smoothing implies. On the validation folds
    the mix lowered WQL by 3% on Tourism and 1% on M3 (benchmarks/history/rounds-07-13.md, twelfth round).
    A partner's offset is bounded by ``MAX_PARTNER_OFFSET`` times the network's (same side of the
    median). Where no partner has an offset (NaN, or no weight), the network's are kept. Rows are
    mixed in blocks of ``MIX_ROWS``, so the partners' offsets never take more memory than a block.
    """
    shapes = [p.distribution for p, w in zip(partners, weights, strict=True) if w > 0.0 and p.distribution is not None]
    if not shapes:
        return values
    out = values.copy()
    for start in range(0, len(values), MIX_ROWS):  # blocks of rows, to bound the temporaries
        rows = slice(start, start + MIX_ROWS)
        offsets = [PartnerDistribution(*(part[rows] for part in shape)).offsets(levels) for shape in shapes]
        with silenced(RuntimeWarning):  # rows without any partner offset
            partner = np.nanmean(np.stack(offsets), axis=0) if len(offsets) > 1 else offsets[0]
        median = values[rows, :, median_index : median_index + 1]
        network = values[rows] - median
        usable = np.isfinite(partner).all(axis=2, keepdims=True)
        bound = MAX_PARTNER_OFFSET * network
        partner = np.clip(np.where(usable, partner, 0.0), np.minimum(bound, 0.0), np.maximum(bound, 0.0))
        mixed = (1.0 - share) * network + share * partner
        out[rows] = median + np.where(usable, mixed, network)
    return out
