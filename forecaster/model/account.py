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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


@dataclass(frozen=True)
class Account:
    """Parts of the median forecast of B windows, in target units."""

    points: np.ndarray  # (B, H, T) each history point's share: attended observation + its adjustment + skip
    baseline: np.ndarray  # (B, H) step, calendar and statics
    covariates: np.ndarray  # (B, H) future-known covariates against their training mean
    partners: np.ndarray  # (B, H) the statistical partners' weighted forecasts

    @property
    def total(self) -> np.ndarray:
        """(B, H) the sum of the parts: the median forecast."""
        return self.points.sum(axis=2) + self.baseline + self.covariates + self.partners

    def share(self, network: np.ndarray, partners: np.ndarray) -> Account:
        """The account after the blend: network parts times the network's share (B, H), plus the partners."""
        return Account(self.points * network[..., None], self.baseline * network, self.covariates * network, partners)


def network_account(
    parts: dict[str, torch.Tensor], weights: np.ndarray, window: np.ndarray, loc: np.ndarray, scale: np.ndarray
) -> Account:
    """The network's median in parts (target units) from its scaled parts, for one chunk of windows.

    ``window`` (B, T) holds the observations in model units (anything where the weight is 0),
    ``loc`` and ``scale`` (B,) each window's scaling.
    """
    scale_, loc_ = scale[:, None], loc[:, None]
    as_array = {name: value.double().cpu().numpy() for name, value in parts.items()}
    weights = weights.astype(np.float64)
    observed = weights * np.where(np.isfinite(window), window, 0.0)[:, None, :]
    points = observed + scale_[..., None] * (as_array["adjustments"] + as_array["skip"])
    # The attention weights sum to 1 (0 when nothing is observed): the window's level rides with them.
    unattended = loc_ * (1.0 - weights.sum(axis=2))
    baseline = scale_ * as_array["baseline"] + unattended
    return Account(points, baseline, scale_ * as_array["covariates"], np.zeros_like(baseline))
