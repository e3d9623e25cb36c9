"""Whether declared future-known covariates say anything the shipped prior does not already forecast.

On a small panel of a frequency the shipped prior serves, ``init="auto"`` keeps the prior as it is, and that was
chosen on the validation suite. A fit that declares covariates cannot simply start there: the prior never saw them,
and fine-tuned from it they are learnt in part only (a promotion worth 40% of sales: MASE 0.684 fine-tuned against
0.508 from scratch, ``benchmarks/history/0.15.0.md``). From scratch, though, a covariate that carries nothing costs
what the prior was worth: 9.7% MASE on the geometric mean of the suite's small and short groups, worse on all 14.

So the check asks the prior's own errors. The prior is fitted as ``init="auto"`` keeps it (no training step; its
covariate weights are zero) and forecasts the last ``CHECK_ORIGINS`` (at least) windows of every series, on which no
weight of it was trained (its blend and interval factors were chosen on the last few). A covariate that matters moves
the target where the prior cannot see it, so the prior's scaled errors follow it: within each window (both demeaned
over the window's steps, so a level the prior missed for the whole window does not count; within each series at
horizon 1), each series' correlation of the errors with the covariate. The covariate is read, and the fit trains from
scratch as before, only where those correlations (as Fisher's z) are clearly not zero across the series: a
t-statistic over the series above the bar the partners' weights switch at (``calibration.SWITCH_T``, Student's t over
the series, two-sided, split over the covariates declared). Otherwise the prior is kept, no step is trained, and the
estimator warns that the covariates are not read. Where there is no evidence either way (no covariate varies inside
the windows of two series), the covariates are read as declared.

A first form compared the prior with the fit from scratch on that fit's held-out windows; those windows had chosen
the fit's early-stopping step and its blend, and on four of the suite's panels the comparison picked the worse model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..data.scaling import loss_scale, naive_error_table
from .calibration import SWITCH_T, paired_t
from .fitting import minimum_history
from .inference import forecast_windows, target_values
from .params import blend_weights


@dataclass(frozen=True)
class CheckResult:
    """What the check read: the largest |t| of a covariate's correlation over the series and the bar it had to clear, the
    prior's mean scaled error there, the series and windows it was read on, and whether the covariates are read."""

    t: float
    bar: float
    prior_error: float
    n_series: int
    n_windows: int
    covariates_read: bool

    def to_dict(self) -> dict[str, float]:
        """JSON-friendly figures (model files store them)."""
        return {
            "t": float(min(self.t, 1e9)),
            "bar": float(self.bar),
            "prior_error": float(self.prior_error),
            "n_series": float(self.n_series),
            "n_windows": float(self.n_windows),
            "covariates_read": float(self.covariates_read),
        }


def scaled_errors(fit, series: np.ndarray, origins: np.ndarray, params: dict) -> np.ndarray:
    """(B, H) ``fit``'s errors (actual minus median as it forecasts: blended, floored, closed) over each window's MASE
    scale, from its history alone; NaN where the target is missing."""
    state, panel = fit.state, fit.panel
    weights = blend_weights(params, state.calibration.blend if state.calibration is not None else None)
    forecast = forecast_windows(fit.network, state, panel, series, origins, weights, fit.device, params["num_threads"])
    median = forecast.quantiles[:, :, state.median_index]
    target = target_values(panel, state)
    horizon = median.shape[1]
    actual = target[series[:, None], origins[:, None] + np.arange(1, horizon + 1)[None, :]]
    scale = loss_scale(naive_error_table(target, state.season_length, panel.first_col), series, origins)
    return (actual - median) / scale[:, None]


def correlation_t(errors: np.ndarray, covariate: np.ndarray, series: np.ndarray) -> tuple[float, int]:
    """|t| over the series of each series' correlation of ``errors`` (B, H) with ``covariate`` (B, H), both demeaned
    within each window (within each series when a window has one step), as Fisher's z; and how many series had one (a
    covariate that does not vary inside a series' windows gives none).

    A correlation, not a slope: a promotion that lifts every series by 40% of its level moves each series' scaled
    errors by a different amount (its level over its MASE scale), so slopes scatter across the series while
    correlations agree. On a 12-series monthly panel with such a promotion, |t| over the slopes was 2.7, 7.5 and 3.4 at
    three origins against a bar of 2.7; over the correlations 6.9, 18.9 and 10.8 (with the promotion replaced by noise:
    0.8-1.5 and 0.6-1.6; ``benchmarks/history/0.15.0.md``).
    """
    usable = np.isfinite(errors) & np.isfinite(covariate)
    e, x = np.where(usable, errors, 0.0), np.where(usable, covariate, 0.0)
    if errors.shape[1] > 1:  # within each window
        count = np.maximum(usable.sum(axis=1, keepdims=True), 1)
        e = np.where(usable, e - e.sum(axis=1, keepdims=True) / count, 0.0)
        x = np.where(usable, x - x.sum(axis=1, keepdims=True) / count, 0.0)
    else:  # one step per window: within each series
        _, rows = np.unique(series, return_inverse=True)
        count = np.maximum(np.bincount(rows, weights=usable[:, 0]), 1)
        e = np.where(usable, e - (np.bincount(rows, weights=e[:, 0]) / count)[rows, None], 0.0)
        x = np.where(usable, x - (np.bincount(rows, weights=x[:, 0]) / count)[rows, None], 0.0)
    units, codes = np.unique(series, return_inverse=True)
    cross = np.bincount(codes, weights=(e * x).sum(axis=1), minlength=len(units))
    spread_x = np.bincount(codes, weights=(x * x).sum(axis=1), minlength=len(units))
    spread_e = np.bincount(codes, weights=(e * e).sum(axis=1), minlength=len(units))
    varies = (spread_x > 1e-12 * spread_x.max(initial=0.0)) & (spread_e > 1e-12 * spread_e.max(initial=0.0))
    r = cross[varies] / np.sqrt(spread_x[varies] * spread_e[varies])
    z = np.arctanh(np.clip(r, -MAX_CORRELATION, MAX_CORRELATION))
    return max(paired_t(z), paired_t(-z)), len(z)  # two-sided


# Correlations are clipped here before Fisher's z, which is infinite at +-1 (a covariate that is the error itself).
MAX_CORRELATION = 0.999


def two_sided_bar(n_series: int, n_covariates: int) -> float:
    """The |t| a correlation over ``n_series`` series must clear: Student's t (``n_series - 1`` degrees of freedom) at the
    normal tail of ``SWITCH_T``, split over both signs and the ``n_covariates`` tested; infinite below two series."""
    if n_series < 2:
        return math.inf
    return float(stats.t.isf(stats.norm.sf(SWITCH_T) / (2 * n_covariates), n_series - 1))


# The origins per series the check reads at least (the last ones, each with a training window's history): at horizon 1
# a series' correlation needs several points, and a flag on one period in ten then varies in most series' windows. The
# prior never trained on any of them; its blend and interval factors were chosen on the last ``HoldOut.back`` of them.
CHECK_ORIGINS = 12


def check_windows(prior) -> tuple[np.ndarray, np.ndarray]:
    """(series, origins) the check reads: the last ``max(back, CHECK_ORIGINS)`` origins of every held-out series of
    ``prior`` that leave a training window's history before them."""
    holdout, panel = prior.holdout, prior.panel
    horizon, input_size = panel.horizon, prior.state.input_size
    back = max(holdout.back, CHECK_ORIGINS)
    series = np.repeat(holdout.series, back)
    origins = panel.last_col - horizon - np.tile(np.arange(back), len(holdout.series))
    inside = origins >= panel.first_col[series] + minimum_history(input_size, horizon)
    return series[inside], origins[inside]


def check_covariates(prior, params: dict) -> CheckResult | None:
    """The check of the future-known covariates on held-out windows of ``prior`` (an ``execute.Fit`` of the prior as it
    is, on the panel with its covariates). None where it has no evidence either way: no window held out, or no
    covariate varies inside the windows of two series (then the covariates are read as declared)."""
    if prior.holdout is None or len(prior.holdout.series) == 0:
        return None
    series, origins = check_windows(prior)
    if len(series) == 0:
        return None
    panel = prior.panel
    errors = scaled_errors(prior, series, origins, params)
    horizon, n_covariates = errors.shape[1], panel.future.shape[2]
    cols = origins[:, None] + np.arange(1, horizon + 1)[None, :]
    tests = []  # (t, bar, series) per covariate
    for j in range(n_covariates):
        t, n = correlation_t(errors, panel.future[series[:, None], cols, j].astype(np.float64), series)
        tests.append((t, two_sided_bar(n, n_covariates), n))
    if not any(math.isfinite(bar) for _, bar, _ in tests):
        return None
    read = any(t > bar for t, bar, _ in tests)
    t, bar, n = max(tests, key=lambda test: (math.isfinite(test[1]), test[0] - test[1] if math.isfinite(test[1]) else 0.0))
    finite = np.isfinite(errors)
    return CheckResult(
        t=t,
        bar=bar,
        prior_error=float(np.abs(errors[finite]).mean()) if finite.any() else float("nan"),
        n_series=n,
        n_windows=int(finite.any(axis=1).sum()),
        covariates_read=read,
    )


def unused_note(check: dict, covariates: list[str], closures: dict | None = None) -> str:
    """The note (the estimator warns with it) of a fit that kept the prior: which covariates it does not read, and why."""
    return (
        f"The declared future-known covariates {covariates} are not read: on {int(check['n_windows'])} held-out windows "
        f"the shipped prior's errors do not follow them (largest |t| of a correlation over the {int(check['n_series'])} series "
        f"where a covariate varies: {check['t']:.2f}, against the bar {check['bar']:.2f}), so init='auto' keeps the "
        "prior, whose covariate weights are zero, and trains no step (fit_plan_.check has the figures)"
        + (f"; the closures learnt from them still apply (closed_when_: {closures})" if closures else "")
        + ". init='scratch' reads them regardless."
    )
