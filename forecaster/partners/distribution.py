"""A statistical partner's forecast distribution: centre, spread per step, and the scale it was modelled on.

Damped Holt-Winters (``holt_winters.py``) is a state space model whose h-step forecast errors
have a known variance (Hyndman et al., 2008, ch. 6): its intervals widen with the horizon at
the rate the series' own smoothing parameters imply, and their width follows the series' own
one-step error. The blend (``blend.py``) mixes that shape into the network's quantile offsets.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from scipy.stats import norm


class PartnerDistribution(NamedTuple):
    """Normal forecast distributions of N series, on ``y`` or (where ``log``) on ``log(y)``."""

    center: np.ndarray  # (N, H) the median forecast in target units (exp of the log-scale mean where ``log``)
    spread: np.ndarray  # (N, H) standard deviation of the h-step error on the modelled scale
    log: np.ndarray  # (N,) bool: modelled on log(y), so the quantiles are multiplicative

    def offsets(self, levels: Sequence[float]) -> np.ndarray:
        """(N, H, Q) each level's quantile minus the median, in target units (NaN where the fit is not finite)."""
        z = norm.ppf(np.asarray(levels, dtype=float))[None, None, :]
        spread = self.spread[..., None]
        with np.errstate(all="ignore"):
            additive = z * spread
            multiplicative = self.center[..., None] * np.expm1(z * spread)
        out = np.where(self.log[:, None, None], multiplicative, additive)
        out[~np.isfinite(out).all(axis=(1, 2))] = np.nan
        return out
