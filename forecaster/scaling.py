"""Per-window target scaling, computed from the encoder window only.

Scale statistics never see a value after the forecast origin: the caller passes
the encoder window (history) and gets ``loc`` and ``scale`` per window.
"""

from __future__ import annotations

import numpy as np

SCALERS = ("standard", "robust", "meanabs")


def window_stats(history: np.ndarray, scaler: str) -> tuple[np.ndarray, np.ndarray]:
    """Location and scale of each row of ``history`` (B, T), ignoring NaN.

    A zero or non-finite scale (constant window) falls back to ``|loc|``, then to 1,
    so constant series give finite forecasts and no division by zero.
    """
    observed = np.isfinite(history)
    count = observed.sum(axis=1)
    safe = np.where(observed, history, 0.0)
    if scaler == "standard":
        loc = safe.sum(axis=1) / np.maximum(count, 1)
        centred = np.where(observed, history - loc[:, None], 0.0)
        scale = np.sqrt((centred**2).sum(axis=1) / np.maximum(count, 1))
    elif scaler == "robust":
        with np.errstate(all="ignore"):
            loc = np.nanmedian(np.where(observed, history, np.nan), axis=1)
            q75, q25 = np.nanpercentile(np.where(observed, history, np.nan), [75, 25], axis=1)
        loc = np.nan_to_num(loc)
        scale = np.nan_to_num((q75 - q25) / 1.349)
    elif scaler == "meanabs":
        loc = np.zeros(len(history))
        scale = np.abs(safe).sum(axis=1) / np.maximum(count, 1)
    else:
        raise ValueError(f"`scaler` must be one of {SCALERS}; got {scaler!r}.")
    magnitude = np.abs(loc)
    tiny = ~np.isfinite(scale) | (scale <= 1e-8 * np.maximum(magnitude, 1e-300))
    scale = np.where(tiny, np.where(magnitude > 0, magnitude, 1.0), scale)
    return loc, scale
