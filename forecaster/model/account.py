"""Where a forecast came from: its median in parts that add up to it, from the same forward pass.

With ``attention_values="observations"`` the network's median, in target units, is

    sum_t weight[h, t] * y[t]                      each attended observation's share
  + sum_t weight[h, t] * scale * adjustment[h, t]  the long-run seasonal and trend adjustment moving it to the target
  + sum_t scale * skip[h, t] * x[t]                the linear skip, when on (exactly linear in the history)
  + baseline[h]                                    step, calendar and statics (reads no history)
  + covariates[h]                                  the future-known covariates' effect against their training mean

and the blend scales all of these by the network's share and adds the statistical partners (where they follow the
covariates, ``model.partner_shift``, the covariates' part keeps the network's whole part and the partners' part is
their forecast with the covariates at their training mean). So
the per-point parts summed over the history, plus ``baseline``, ``covariates`` and ``partners``,
give the forecast, to floating-point rounding (the forecast is defined as that sum). The account is
in the units the network models: with ``log_target`` they add up to ``log1p`` of the network's forecast,
so no account is given then.

With ``attention_values="states"`` (the default) the head reads the attention context together with the
query (step, an encoder summary, calendar, statics), so weight x value is not a share. The network's median
is split over the history points by integrated gradients instead, along the straight path from the flat history
at the window's level (every observed value at ``loc``), in target units and through the window's scaling. Along the
straight path from that flat history the scaled window never changes (the deviations and the scale grow
together), so the network's forecast is ``loc + a * scale * m`` at path point ``a``, its gradient is the
same all along the path, and the integral is exact with the gradient at the window itself:

    share[h, t] = (y[t] - loc) * d forecast[h] / d y[t]
                = scale * (x[t] g[h, t] + x[t] dloc[t] (1 - G[h]) + spread[t] (m[h] - sum_s x[s] g[h, s]))

with ``x`` the scaled window, ``m`` the network's median in scaled units at the covariates' mean, ``g`` its
gradient by ``x`` (``G`` summed over the observed points), ``dloc`` the derivative of ``loc`` by each value
and ``spread`` each value's part of the scale (:func:`forecaster.data.scaling.scale_derivatives`). The
shares add up to ``scale * m`` exactly (completeness), so

    sum_t share[h, t]                              each history point's share (the linear skip's included)
  + covariates[h]                                  the head's change from the covariates' mean to their values
  + baseline[h]                                    the window's level (the forecast where the path starts)
  + partners[h]                                    the statistical partners' weighted forecasts

is the forecast. The baseline is ``loc`` itself, the forecast at the path's start (as the history flattens onto
the level; a history exactly flat would make the scale fall back, below). A window whose scale fell back to
``|loc|`` or 1 (a constant window, or a zero interquartile range with the robust scaler) moves no share: its scale
does not grow along the path, and the network's part is in its baseline. The past covariates, the calendar, the
observed flags and the long-run seasonal-profile and trend-line inputs are held as the network reads them (in
the window's scaled units): they are inputs beside the window, not history points.

The shares add up to ``scale * m`` for any gradient (the parts of the scale sum to 1 and the level's part to 0):
:data:`SHARE_TOLERANCE` guards the scaler's derivatives and the arithmetic, and the tests check the gradient itself
against Captum's integrated gradients.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import torch

from ..data.scaling import scale_derivatives

# Largest gap between the shares and the network's part, relative to their size, before it is an error: the
# shares add up exactly when the scaler's derivatives are right, so a gap beyond float rounding is a wrong account.
SHARE_TOLERANCE = 1e-6

# Largest gap between the state design's forecast and the sum of its parts, relative to their sizes: float32
# rounding is about 1e-7.
SETTLE_TOLERANCE = 1e-5


@dataclass(frozen=True)
class Account:
    """Parts of the median forecast of B windows, in target units."""

    # (B, H, T) each history point's share: attended observation + its adjustment + skip (observations), or its
    # integrated-gradients share of the head + skip (states)
    points: np.ndarray
    # (B, H) step, calendar and statics (states: the window's level, where the shares' path starts)
    baseline: np.ndarray
    covariates: np.ndarray  # (B, H) future-known covariates against their training mean
    partners: np.ndarray  # (B, H) the statistical partners' weighted forecasts
    floor: np.ndarray | None = None  # (B, H) what lifted a negative median to zero (``nonnegative``); None: nothing
    # (B, H) the median as the forecast returns it, which the parts add up to within float rounding; None: their sum
    median: np.ndarray | None = None

    @property
    def total(self) -> np.ndarray:
        """(B, H) the sum of the parts: the median forecast."""
        total = self.points.sum(axis=2) + self.baseline + self.covariates + self.partners
        return total if self.floor is None else total + self.floor

    @property
    def lift(self) -> np.ndarray:
        """(B, H) the floor's part, zeros where nothing was lifted."""
        return np.zeros_like(self.baseline) if self.floor is None else self.floor

    def share(self, network: np.ndarray, partners: np.ndarray) -> Account:
        """The account after the blend: network parts times the network's share (B, H), plus the partners."""
        return Account(self.points * network[..., None], self.baseline * network, self.covariates * network, partners)

    @property
    def forecast(self) -> np.ndarray:
        """(B, H) the median forecast: as the forecast returns it where recorded (``of``), else the parts' sum."""
        return self.total if self.median is None else self.median

    def of(self, median: np.ndarray) -> Account:
        """The account recording ``median`` (B, H), the forecast's own median, which its parts add up to."""
        return replace(self, median=np.asarray(median, dtype=np.float64))

    def floored(self, lift: np.ndarray) -> Account:
        """The account of the median raised by ``lift`` (B, H; zero where it stays): the lift is its own part."""
        return replace(self, floor=self.lift + lift)

    def constant(self, steps: np.ndarray, level: np.ndarray) -> Account:
        """The account with steps ``steps`` (bool, B x H) forecast as their window's ``level`` (B,): all of it in the
        baseline."""
        keep = ~steps
        return self._kept(keep, baseline=np.where(keep, self.baseline, level[:, None]))

    def closed(self, steps: np.ndarray) -> Account:
        """The account with steps ``steps`` (bool, B x H) forecast as zero by a closure: every part there is zero (the
        forecast records those steps, ``Forecast.closed``, so that a zero the closure made is told from parts that
        happen to be zero)."""
        keep = ~steps
        return self._kept(keep, baseline=np.where(keep, self.baseline, 0.0))

    def _kept(self, keep: np.ndarray, **fields) -> Account:
        """The account with the points', covariates', partners' and floor's parts zero where ``keep`` (B, H) is False
        (``np.where``, not a product: a negative part times False would read -0.0), and ``fields`` replaced."""
        return replace(
            self,
            points=np.where(keep[..., None], self.points, 0.0),
            covariates=np.where(keep, self.covariates, 0.0),
            partners=np.where(keep, self.partners, 0.0),
            floor=None if self.floor is None else np.where(keep, self.floor, 0.0),
            **fields,
        )

    def take(self, rows: slice | np.ndarray) -> Account:
        """The account of some windows."""
        return Account(
            **{name: None if value is None else value[rows] for name, value in vars(self).items()}  # every field per window
        )

    def settled(self, median: np.ndarray) -> Account:
        """The account with its float rounding against ``median`` (B, H) moved into ``baseline``, so it adds up exactly.

        For the state design, whose forecasts come from the network's own forward pass (float32) and stay
        bit-identical: the parts are summed in float64 and differ from it by rounding only. A larger gap
        would be a wrong account, so it raises instead of hiding it.

        Raises:
            ArithmeticError: the parts miss the median by more than float32 rounding.
        """
        gap = median - self.total
        size = np.abs(median) + np.abs(self.points).sum(axis=2) + np.abs(self.baseline)
        size = size + np.abs(self.covariates) + np.abs(self.partners)
        if (np.abs(gap) > SETTLE_TOLERANCE * size + 1e-12).any():
            worst = float(np.max(np.abs(gap) / (size + 1e-300)))
            raise ArithmeticError(f"The forecast's parts miss it by {worst:.2e} of its size; please report this with the data.")
        return replace(self, baseline=self.baseline + gap)

    @staticmethod
    def concatenate(accounts: list[Account]) -> Account:
        """One account of the windows of several."""
        fields = ("points", "baseline", "covariates", "partners")
        floor = None if all(a.floor is None for a in accounts) else np.concatenate([a.lift for a in accounts])
        median = None if any(a.median is None for a in accounts) else np.concatenate([a.median for a in accounts])
        joined = (np.concatenate([getattr(a, f) for a in accounts]) for f in fields)
        return Account(*joined, floor=floor, median=median)


def network_account(
    parts: dict[str, torch.Tensor],
    weights: np.ndarray,
    window: np.ndarray,
    loc: np.ndarray,
    scale: np.ndarray,
    scaler: str = "standard",
) -> Account:
    """The network's median in parts (target units) from its scaled parts, for one chunk of windows.

    ``window`` (B, T) holds the observations in target units, NaN where nothing is observed (padding
    included); ``loc`` and ``scale`` (B,) each window's scaling by ``scaler``.
    """
    scale_, loc_ = scale[:, None], loc[:, None]
    as_array = {name: value.double().cpu().numpy() for name, value in parts.items()}
    if "network" in as_array:  # the state design: the median's integrated gradients over the points
        return _gradient_account(as_array, window, loc, scale, scaler)
    weights = weights.astype(np.float64)
    observed = weights * np.where(np.isfinite(window), window, 0.0)[:, None, :]
    points = observed + scale_[..., None] * (as_array["adjustments"] + as_array["skip"])
    # The attention weights sum to 1 (0 when nothing is observed): the window's level rides with them.
    unattended = loc_ * (1.0 - weights.sum(axis=2))
    baseline = scale_ * as_array["baseline"] + unattended
    return Account(points, baseline, scale_ * as_array["covariates"], np.zeros_like(baseline))


def _gradient_account(
    parts: dict[str, np.ndarray], window: np.ndarray, loc: np.ndarray, scale: np.ndarray, scaler: str
) -> Account:
    """The state design's account: every history point's integrated-gradients share (see the module's docstring)."""
    observed = np.isfinite(window)
    x = np.where(observed, (window - loc[:, None]) / scale[:, None], 0.0)  # the scaled window, float64
    dloc, spread, regular = scale_derivatives(window, scaler)
    gradient = parts["gradient"]  # (B, H, T)
    median = parts["network"] + parts["skip"].sum(axis=2) + parts["baseline"]  # (B, H), at the covariates' mean
    read = (x[:, None, :] * gradient).sum(axis=2)
    total = (gradient * observed[:, None, :]).sum(axis=2)
    shares = x[:, None, :] * gradient + (x * dloc)[:, None, :] * (1.0 - total)[..., None]
    shares = scale[:, None, None] * (shares + spread[:, None, :] * (median - read)[..., None])
    shares *= regular[:, None, None]
    network = scale[:, None] * median
    gap = network - shares.sum(axis=2)  # float rounding where the scale is regular; the network's part where not
    size = np.abs(network) + np.abs(shares).sum(axis=2)
    if (regular[:, None] & (np.abs(gap) > SHARE_TOLERANCE * size + 1e-12 * np.abs(loc)[:, None])).any():
        worst = float(np.max(np.where(regular[:, None], np.abs(gap) / (size + 1e-300), 0.0)))
        raise ArithmeticError(
            f"The history points' shares miss the network by {worst:.2e} of its size; please report this with the data."
        )
    baseline = loc[:, None] + gap
    return Account(shares, baseline, scale[:, None] * parts["covariates"], np.zeros_like(baseline))


# The parts of each (series, step)'s forecast in ``explain(by="step")``, by the model's ``attention_values``: every
# network part carries the blend weight of the network (1 less the partners' weights: 0.5 with the default partners),
# and the names say so.
# - history_x_network_weight: the history points' shares, summed. With "observations" exact by construction (weight x
#   observation, plus its seasonal and trend adjustment and its linear-skip term); with "states" each point's
#   integrated-gradients share of what the network adds to the window's level, along the path from a flat history at
#   that level (the point frame's ``contribution``, summed over a (series, step)'s rows).
# - window_level_x_network_weight ("states"): the window's level, where that path starts; windows whose scale fell
#   back, such as constant ones, have no shares and keep the network's part here.
#   step_and_statics_x_network_weight ("observations"): the head's step, calendar and statics term and the unattended
#   level.
# - covariates_x_network_weight: the future-known covariates' effect against their training mean (whole, not times the
#   network's weight, where the partners follow the covariates: ``model.partner_shift``). With "observations" their
#   effect through the head: what they change in the attention weights is in the history's part.
# - partners_weighted: the statistical partners' forecasts times their blend weights (where they follow the
#   covariates, their forecasts with the covariates at their training mean).
# - floor_at_zero: what lifted a negative median to zero (``nonnegative``); 0 where nothing was lifted.
# Beside the parts, ``closed_step`` marks the steps a closure forecast at zero (every part there is 0), and ``y_hat`` is the
# forecast's own median (``Account.forecast``).
STEP_PARTS = {
    "states": (
        "history_x_network_weight",
        "window_level_x_network_weight",
        "covariates_x_network_weight",
        "partners_weighted",
        "floor_at_zero",
    ),
    "observations": (
        "history_x_network_weight",
        "step_and_statics_x_network_weight",
        "covariates_x_network_weight",
        "partners_weighted",
        "floor_at_zero",
    ),
}
# Where each part comes from in the point frame (whose ``step_*`` columns repeat it on every history row).
_FROM_POINTS = ("contribution", "step_baseline", "step_covariates", "step_partners", "step_floor")


def step_account(explanation, id_col: str, time_col: str, values: str | None):
    """One row per (series, step): the parts of its median forecast, which add up to ``y_hat`` (see STEP_PARTS).

    ``explanation``: ``explain``'s point frame (with its padded rows or not: they hold no share). The history part is
    the points' shares summed; the others are read once per (series, step), not once per history row.
    """
    import pandas as pd

    names = STEP_PARTS.get(values or "states", STEP_PARTS["states"])
    keys = [id_col, time_col, "step"]
    history = explanation.groupby(keys, sort=False)["contribution"].sum()
    per_step = [*_FROM_POINTS[1:], "y_hat", *(["closed_step"] if "closed_step" in explanation else [])]
    once = explanation.groupby(keys, sort=False)[per_step].first()
    out = pd.concat([history, once], axis=1).rename(columns=dict(zip(_FROM_POINTS, names, strict=True)))
    out = out.reset_index()
    out.attrs.update(parts=list(names), attention_values=values)  # a list selects the columns: out[out.attrs['parts']]
    return out
