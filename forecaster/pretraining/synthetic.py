"""Synthetic series for the prior: Gaussian-process kernel compositions and structural generators.

Two sources, both seeded and drawn in batches (no loop over series):

- **Kernel compositions** in the manner of Chronos' KernelSynth (Ansari et al., 2024): up to
  ``MAX_KERNELS`` kernels drawn from a bank (constant, linear, RBF, rational quadratic, periodic at the
  season, at its multiples and at other periods, white noise) joined by ``+`` or ``*``; a batch of series
  shares one composition and is sampled from the Gaussian process it defines.
- **Structural series**: level and trend (linear, damped or exponential), one or two seasonalities
  (additive or multiplicative), level shifts, intermittent demand (Bernoulli occurrences with gamma
  sizes) and white or random-walk noise from 1% to 30% of the level.

Values are then given a random scale, and most series are moved to positive values, as business
and economic series are.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

MAX_KERNELS = 5
# Series that share one kernel composition (one Cholesky factor per batch).
KERNEL_BATCH = 16
JITTER = 1e-6


def _kernel_bank(season: int, length: int, rng: np.random.Generator) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """One kernel drawn from the bank, as a function of the times ``t`` (L,) and their differences ``d`` (L, L)."""
    kind = rng.choice(["constant", "linear", "rbf", "rq", "periodic", "periodic", "white"])
    if kind == "constant":
        c = rng.uniform(0.1, 1.0)
        return lambda t, d: np.full_like(d, c)
    if kind == "linear":
        centre = rng.uniform(0, length)
        return lambda t, d: (t[:, None] - centre) * (t[None, :] - centre) / length**2
    if kind == "rbf":
        scale = rng.choice([0.1, 0.25, 0.5, 1.0]) * 50
        return lambda t, d: np.exp(-0.5 * (d / scale) ** 2)
    if kind == "rq":
        scale, alpha = rng.uniform(5, 60), rng.choice([0.1, 1.0, 10.0])
        return lambda t, d: (1 + d**2 / (2 * alpha * scale**2)) ** (-alpha)
    if kind == "periodic":
        if season > 1 and rng.random() < 0.7:
            period = season * rng.choice([1, 1, 1, 2, 0.5]) if season % 2 == 0 else season
        else:
            period = rng.choice([3, 5, 7, 10, 14, 24, 30, 52])
        scale = rng.uniform(0.5, 2.0)
        return lambda t, d: np.exp(-2 * np.sin(np.pi * np.abs(d) / period) ** 2 / scale**2)
    return lambda t, d: (d == 0).astype(float) * rng.uniform(0.01, 0.3)


def kernel_series(n: int, length: int, season: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` series of ``length`` periods sampled from random kernel compositions, (n, length)."""
    t = np.arange(length, dtype=np.float64)
    d = t[:, None] - t[None, :]
    out = []
    for _ in range(int(np.ceil(n / KERNEL_BATCH))):
        k = np.zeros((length, length))
        for j in range(rng.integers(1, MAX_KERNELS + 1)):
            part = _kernel_bank(season, length, rng)(t, d)
            k = part if j == 0 else (k + part if rng.random() < 0.6 else k * part)
        k = k + JITTER * np.eye(length) * max(np.abs(np.diag(k)).max(), 1.0)
        values, vectors = np.linalg.eigh(k)  # a factor that survives a near-singular composition
        factor = vectors * np.sqrt(np.clip(values, 0.0, None))
        out.append(rng.standard_normal((KERNEL_BATCH, length)) @ factor.T)
    return np.concatenate(out)[:n]


def structural_series(n: int, length: int, season: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` series of level, trend, seasonality, level shifts, intermittency and noise, (n, length)."""
    t = np.arange(length, dtype=np.float64)[None, :]
    slope = rng.normal(0, 0.01, (n, 1)) * rng.choice([0, 1, 1], (n, 1))
    damping = rng.choice([1.0, 0.98, 0.95], (n, 1))
    damped = (1 - damping**t) / np.where(damping < 1, 1 - damping, 1.0)
    trend_t = np.where(damping < 1, damped, t)
    level = 1.0 + slope * trend_t
    exponential = rng.random((n, 1)) < 0.15
    level = np.where(exponential, np.exp(np.clip(slope * t, -3, 3)), level)
    seasonal = np.zeros((n, length))
    periods = [season] if season > 1 else []
    periods += [int(p) for p in rng.choice([3, 5, 7, 10], 1)]
    for period in periods:
        amplitude = rng.uniform(0, 0.4, (n, 1)) * (rng.random((n, 1)) < (0.8 if period == season else 0.25))
        harmonics = rng.integers(1, 4)
        phase = rng.uniform(0, 2 * np.pi, (n, harmonics))
        weight = rng.dirichlet(np.ones(harmonics), n)
        for h in range(harmonics):
            seasonal += amplitude * weight[:, h : h + 1] * np.sin(2 * np.pi * (h + 1) * t / period + phase[:, h : h + 1])
    multiplicative = rng.random((n, 1)) < 0.5
    y = np.where(multiplicative, level * (1 + seasonal), level + seasonal)
    shifts = (rng.random((n, length)) < rng.uniform(0, 0.03, (n, 1))) * rng.normal(0, 0.3, (n, length))
    y = y + np.cumsum(shifts, axis=1)
    noise = rng.uniform(0.01, 0.3, (n, 1))
    walk = rng.random((n, 1)) < 0.3  # part of the noise accumulates (a random walk), as in stochastic trends
    y = y + noise * np.where(walk, np.cumsum(rng.standard_normal((n, length)), axis=1) * 0.3, rng.standard_normal((n, length)))
    intermittent = rng.random((n, 1)) < 0.1
    occurs = rng.random((n, length)) < rng.uniform(0.1, 0.6, (n, 1))
    sizes = rng.gamma(rng.uniform(1, 5, (n, 1)), 1.0, (n, length)) * np.clip(y, 0.1, None)
    return np.where(intermittent, occurs * sizes, y)


def synthetic_panel(n: int, lengths: tuple[int, int], season: int, seed: int) -> list[np.ndarray]:
    """``n`` synthetic series (half kernel compositions, half structural), lengths uniform in ``lengths``.

    Each series gets a random scale (1 to 10^4) and, three times in four, a shift to positive values.
    """
    rng = np.random.default_rng(seed)
    longest = lengths[1]
    half = n // 2
    values = np.concatenate([kernel_series(half, longest, season, rng), structural_series(n - half, longest, season, rng)])
    values = values[rng.permutation(n)]
    spread = values.std(axis=1, keepdims=True) + 1e-9
    values = (values - values.mean(axis=1, keepdims=True)) / spread
    positive = rng.random((n, 1)) < 0.75
    values = np.where(positive, values - values.min(axis=1, keepdims=True) + rng.uniform(0.2, 5.0, (n, 1)), values)
    values = values * 10 ** rng.uniform(0, 4, (n, 1))
    keep = rng.integers(lengths[0], lengths[1] + 1, n)
    return [row[longest - k :] for row, k in zip(values, keep, strict=True)]
