"""Whether declared covariates earn their place: a fit that reads them against the prior that does not.

On a small panel of a frequency the shipped prior serves, ``init="auto"`` keeps the prior as it is, and that was
chosen on the validation suite. A fit that declares covariates cannot start there: the prior never saw them, and
fine-tuned from it they are learnt in part only (a promotion worth 40% of sales: MASE 0.68 fine-tuned against 0.51
from scratch, ``benchmarks/history/0.15.0.md``). So it trains from scratch, and a covariate that carries nothing then
costs what the prior was worth: 9.7% MASE on the geometric mean of the suite's small and short groups, worse on all 14
panels. The check settles it per fit on windows neither model read: the fit from scratch holds out the last windows of
some series (``calibration.plan_holdout``), the prior never trained on anything, and both forecast those windows. The
covariates are kept only where the fit that reads them is clearly better, by the rule the partners' weights are
switched with (``calibration.choose_blend``): a paired t-statistic over the held-out series of the gain in mean scaled
absolute error of the median, above ``critical_t(SWITCH_T, series)``. Otherwise the prior is kept, with the covariates'
weights at zero, and the estimator warns that they are not read.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..data.scaling import loss_scale, naive_error_table
from .calibration import SWITCH_T, critical_t
from .inference import forecast_windows, target_values
from .params import blend_weights


@dataclass(frozen=True)
class CheckResult:
    """What the check read: each model's mean scaled absolute error over the held-out series, the gain's t-statistic
    and the bar it had to clear, the series and windows it was read on, and whether the covariates won."""

    with_covariates: float
    prior: float
    t: float
    bar: float
    n_series: int
    n_windows: int
    covariates_read: bool

    def to_dict(self) -> dict[str, float]:
        """JSON-friendly figures (model files store them; an infinite bar is stored as -1: no bar can be cleared)."""
        bar = self.bar if math.isfinite(self.bar) else -1.0
        t = self.t if math.isfinite(self.t) else 1e9
        return {
            "with_covariates": float(self.with_covariates),
            "prior": float(self.prior),
            "t": float(t),
            "bar": float(bar),
            "n_series": float(self.n_series),
            "n_windows": float(self.n_windows),
            "covariates_read": float(self.covariates_read),
        }


def held_out_errors(fit, series: np.ndarray, back: np.ndarray, params: dict) -> np.ndarray:
    """(B,) each window's mean scaled absolute error of ``fit``'s median (as it forecasts: blended, floored, closed).

    Windows are (``series``, origin ``back`` periods before the panel's last column): each fit's panel pads its own
    input window, so an origin is named by its distance from the end. The scale is the window's MASE scale, from its
    history alone.
    """
    state, panel = fit.state, fit.panel
    origins = panel.last_col - back
    weights = blend_weights(params, state.calibration.blend if state.calibration is not None else None)
    forecast = forecast_windows(fit.network, state, panel, series, origins, weights, fit.device, params["num_threads"])
    median = forecast.quantiles[:, :, state.median_index]
    target = target_values(panel, state)
    horizon = median.shape[1]
    actual = target[series[:, None], origins[:, None] + np.arange(1, horizon + 1)[None, :]]
    scale = loss_scale(naive_error_table(target, state.season_length, panel.first_col), series, origins)
    usable = np.isfinite(actual) & np.isfinite(median)
    errors = np.where(usable, np.abs(actual - median), 0.0) / scale[:, None]
    counts = usable.sum(axis=1)
    return np.where(counts > 0, errors.sum(axis=1) / np.maximum(counts, 1), np.nan)


def compare(with_covariates, prior, params: dict) -> CheckResult | None:
    """The check of two fits of one frame (``execute.Fit``): ``with_covariates`` from scratch, ``prior`` the prior
    as it is. None when the fit from scratch held no window out (nothing to read the check on)."""
    holdout = with_covariates.holdout
    if holdout is None or len(holdout.series) == 0:
        return None
    series, origins = holdout.windows(with_covariates.panel)
    inside = origins >= with_covariates.panel.first_col[series]
    series, origins = series[inside], origins[inside]
    if len(series) == 0:
        return None
    back = with_covariates.panel.last_col - origins
    mine = held_out_errors(with_covariates, series, back, params)
    theirs = held_out_errors(prior, series, back, params)
    usable = np.isfinite(mine) & np.isfinite(theirs)
    units, codes = np.unique(series[usable], return_inverse=True)
    count = np.bincount(codes, minlength=len(units))
    gain = np.bincount(codes, weights=(theirs - mine)[usable], minlength=len(units)) / np.maximum(count, 1)
    bar = critical_t(SWITCH_T, len(units))
    t = _t_statistic(gain)
    return CheckResult(
        with_covariates=float(np.mean(mine[usable])) if usable.any() else float("nan"),
        prior=float(np.mean(theirs[usable])) if usable.any() else float("nan"),
        t=t,
        bar=bar,
        n_series=len(units),
        n_windows=int(usable.sum()),
        covariates_read=bool(t > bar),
    )


def _t_statistic(gain: np.ndarray) -> float:
    """The paired t-statistic of the mean gain over series (0 with fewer than two, or none to tell from noise)."""
    if len(gain) < 2:
        return 0.0
    spread = gain.std(ddof=1) / np.sqrt(len(gain))
    if spread > 0:
        return float(gain.mean() / spread)
    return math.inf if gain.mean() > 0 else 0.0


def unused_warning(check: dict, covariates: list[str]) -> str:
    """The estimator's warning when the prior won: which covariates are not read, and the figures that decided it."""
    bar = "no bar a t-statistic can clear" if check["bar"] < 0 else f"the bar {check['bar']:.2f}"
    return (
        f"The declared covariates {covariates} are not read: on {int(check['n_windows'])} held-out windows of "
        f"{int(check['n_series'])} series a fit from scratch that reads them (mean scaled error "
        f"{check['with_covariates']:.4f}) was not clearly better than the shipped prior without them "
        f"({check['prior']:.4f}; paired t {check['t']:.2f} against {bar}), so init='auto' keeps the prior, whose "
        "covariate weights are zero (fit_plan_.check has the figures). init='scratch' reads them regardless."
    )
