"""Where a forecast came from: its median in parts that add up to it, from the same forward pass.

With ``attention_values="observations"`` the network's median, in target units, is

    sum_t weight[h, t] * y[t]                      each attended observation's share
  + sum_t weight[h, t] * scale * adjustment[h, t]  the long-run seasonal and trend adjustment moving it to the target
  + sum_t scale * skip[h, t] * x[t]                the linear skip, when on (exactly linear in the history)
  + baseline[h]                                    step, calendar and statics (reads no history)
  + covariates[h]                                  the future-known covariates' effect against their training mean

and the blend scales all of these by the network's share and adds the statistical partners. So
the per-point parts summed over the history, plus ``baseline``, ``covariates`` and ``partners``,
give the forecast, to floating-point rounding (the forecast is defined as that sum). The account is
in the units the network models: with ``log_target`` they add up to ``log1p`` of the network's forecast,
so no account is given then.

With ``attention_values="states"`` (the default) the head reads the attention context together with the
query (step, an encoder summary, calendar, statics). Its median is split over the history points by integrated
gradients from a flat history (every observed value at the window's level), which add up to the head's change
from that flat history (completeness), so every part of the forecast is owned:

    sum_t scale * skip[h, t] * x[t]                the linear skip, each history point's exact term
  + sum_t scale * shares[h, t]                     each history point's integrated-gradients share of the head
  + covariates[h]                                  the head's change from the covariates' mean to their values
  + baseline[h]                                    the window's level, the skip's bias and the head for a flat
                                                   history (step, calendar, statics, the long-run seasonal profile
                                                   and trend line, which read the history as a whole)
  + partners[h]                                    the statistical partners' weighted forecasts

The shares are exact in the sense of completeness: they add up to the head's change, up to the integration
rule's error, which is checked against :data:`SHARE_TOLERANCE` and never hidden beyond it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

# Largest gap between the state design's forecast and the sum of its parts, relative to their sizes: float32
# rounding is about 1e-7.
SETTLE_TOLERANCE = 1e-5
# Largest completeness gap of the integrated-gradients shares, relative to the head's size, before it is an error.
SHARE_TOLERANCE = 1e-4


@dataclass(frozen=True)
class Account:
    """Parts of the median forecast of B windows, in target units."""

    # (B, H, T) each history point's share: attended observation + its adjustment + skip (observations), or its
    # integrated-gradients share of the head + skip (states)
    points: np.ndarray
    # (B, H) step, calendar and statics (states: the window level, the skip's bias and the head for a flat history)
    baseline: np.ndarray
    covariates: np.ndarray  # (B, H) future-known covariates against their training mean
    partners: np.ndarray  # (B, H) the statistical partners' weighted forecasts

    @property
    def total(self) -> np.ndarray:
        """(B, H) the sum of the parts: the median forecast."""
        return self.points.sum(axis=2) + self.baseline + self.covariates + self.partners

    def share(self, network: np.ndarray, partners: np.ndarray) -> Account:
        """The account after the blend: network parts times the network's share (B, H), plus the partners."""
        return Account(self.points * network[..., None], self.baseline * network, self.covariates * network, partners)

    def constant(self, rows: np.ndarray, level: np.ndarray) -> Account:
        """The account with windows ``rows`` (bool, B) forecast as ``level`` (B,): all of it in the baseline."""
        keep = ~rows[:, None]
        return Account(
            self.points * keep[..., None],
            np.where(keep, self.baseline, level[:, None]),
            self.covariates * keep,
            self.partners * keep,
        )

    def take(self, rows: slice | np.ndarray) -> Account:
        """The account of some windows."""
        return Account(self.points[rows], self.baseline[rows], self.covariates[rows], self.partners[rows])

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
        return Account(self.points, self.baseline + gap, self.covariates, self.partners)

    @staticmethod
    def concatenate(accounts: list[Account]) -> Account:
        """One account of the windows of several."""
        fields = ("points", "baseline", "covariates", "partners")
        return Account(*(np.concatenate([getattr(a, f) for a in accounts]) for f in fields))


def network_account(
    parts: dict[str, torch.Tensor], weights: np.ndarray, window: np.ndarray, loc: np.ndarray, scale: np.ndarray
) -> Account:
    """The network's median in parts (target units) from its scaled parts, for one chunk of windows.

    ``window`` (B, T) holds the observations in model units (anything where the weight is 0),
    ``loc`` and ``scale`` (B,) each window's scaling.
    """
    scale_, loc_ = scale[:, None], loc[:, None]
    as_array = {name: value.double().cpu().numpy() for name, value in parts.items()}
    if "network" in as_array:  # the state design: the skip's exact terms and the head's shares
        points = scale_[..., None] * as_array["skip"]
        baseline = loc_ + scale_ * as_array["baseline"]
        head = scale_ * as_array["network"]
        shares = scale_[..., None] * as_array["shares"]
        flat = scale_ * as_array["flat"]
        gap = head - flat - shares.sum(axis=2)  # the integration rule's error (float rounding at 4 nodes)
        size = np.abs(head) + np.abs(flat) + np.abs(shares).sum(axis=2) + 1e-12 * np.abs(loc_)
        if (np.abs(gap) > SHARE_TOLERANCE * size + 1e-12).any():
            worst = float(np.max(np.abs(gap) / (size + 1e-300)))
            raise ArithmeticError(
                f"The history points' shares miss the head by {worst:.2e} of its size; please report this with the data."
            )
        return Account(points + shares, baseline + flat + gap, scale_ * as_array["covariates"], np.zeros_like(baseline))
    weights = weights.astype(np.float64)
    observed = weights * np.where(np.isfinite(window), window, 0.0)[:, None, :]
    points = observed + scale_[..., None] * (as_array["adjustments"] + as_array["skip"])
    # The attention weights sum to 1 (0 when nothing is observed): the window's level rides with them.
    unattended = loc_ * (1.0 - weights.sum(axis=2))
    baseline = scale_ * as_array["baseline"] + unattended
    return Account(points, baseline, scale_ * as_array["covariates"], np.zeros_like(baseline))
