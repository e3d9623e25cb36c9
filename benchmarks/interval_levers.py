"""The validation suite with an interval lever forced in every fit: a measurement of what each lever would do.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/interval_levers.py --lever factors --panels small short --out /tmp/f.csv
    OMP_WAIT_POLICY=PASSIVE python benchmarks/interval_levers.py --lever widen --panels small short --out /tmp/w.csv
    OMP_WAIT_POLICY=PASSIVE python benchmarks/interval_levers.py --lever sqrt --panels small short --out /tmp/s.csv
    OMP_WAIT_POLICY=PASSIVE python benchmarks/interval_levers.py --lever shift --panels small short --out /tmp/l.csv

Levers: ``factors`` (the learnt conformal factors per step and level, in every fit), ``widen`` (those factors
clipped at 1: offsets only widen), ``sqrt`` (the factors' square root: halfway, in logs, to the network's own
quantiles), ``shift`` (every quantile moved, per horizon step, by the held-out windows' median error of the blended
median in units of the window's 10-90 width). The other arguments are ``suite.py``'s; each lever's rows get its name
as their label unless ``--label`` is given.
"""

from __future__ import annotations

import sys

import numpy as np
import suite

from forecaster.model import calibration, fitting, inference, intervals

LEVERS = ("factors", "widen", "sqrt", "shift")


def _step_medians(error: np.ndarray) -> np.ndarray:
    """(H,) the median of each step's finite errors, pooling neighbouring steps until ``MIN_PER_STEP``."""
    horizon = error.shape[1]
    counts = np.isfinite(error).sum(axis=0)
    out = np.zeros(horizon)
    for step in range(horizon):  # once per fit
        for width in range(horizon):
            lo, hi = max(0, step - width), min(horizon, step + width + 1)
            if counts[lo:hi].sum() >= intervals.MIN_PER_STEP or (lo == 0 and hi == horizon):
                break
        values = error[:, lo:hi][np.isfinite(error[:, lo:hi])]
        out[step] = np.median(values) if len(values) else 0.0
    return out


def _shifted(quantiles: np.ndarray, shift: np.ndarray) -> np.ndarray:
    width = quantiles[:, :, -1] - quantiles[:, :, 0]
    return quantiles + shift[None, :, None] * width[..., None]


def install_shift() -> None:
    """Learn each fit's shift on its held-out windows and apply it to every forecast of that fit."""
    shifts: dict[int, np.ndarray] = {}
    learn, apply = calibration.calibrate, inference.apply_factors

    def calibrate(values, target, panel, series, origins, levels, median_index, season, history, fixed, defaults=None, **options):
        learnt = learn(values, target, panel, series, origins, levels, median_index, season, history, fixed, defaults, **options)
        if learnt.treatment is None:
            return learnt
        horizon = values.shape[1]
        actual = target[series[:, None], origins[:, None] + np.arange(1, horizon + 1)[None, :]]
        active = [n for n in calibration.PARTNERS if learnt.blend.get(n, 0.0) > 0.0]
        fits = [calibration.PARTNERS[n].fit for n in active]
        partners = calibration.partner_distributions(
            fits, target, panel.first_col, origins, horizon, season, history, series=series, week=options.get("partner_week", 0)
        )
        weights = [learnt.blend[n] for n in active]
        shift = options.get("shift")
        means = [p.mean if shift is None else p.mean + shift for p in partners]
        forecast = calibration.blend_quantiles(values, means, weights, median_index) if active else values
        if learnt.shape > 0:
            forecast = calibration.mix_offsets(forecast, partners, weights, median_index, levels, learnt.shape)
        forecast = calibration.apply_factors(forecast, learnt.factors, median_index)
        width = forecast[:, :, -1] - forecast[:, :, 0]
        usable = np.isfinite(actual) & (width > 0)
        error = np.where(usable, (actual - forecast[:, :, median_index]) / np.where(usable, width, 1.0), np.nan)
        factors = learnt.factors if learnt.factors is not None else np.ones((horizon, len(levels)))
        shifts[id(factors)] = _step_medians(error)
        return calibration.Calibration(
            learnt.blend, factors, learnt.n_windows, learnt.shape, learnt.treatment, learnt.held_out_wql
        )

    def apply_factors(values, factors, median_index):
        out = apply(values, factors, median_index)
        return _shifted(out, shifts[id(factors)]) if factors is not None and id(factors) in shifts else out

    fitting.calibrate, inference.apply_factors = calibrate, apply_factors


def install_factors(power: float = 1.0, floor: float | None = None) -> None:
    """Force the learnt factors in every fit, raised to ``power`` and clipped below at ``floor``."""
    learn = calibration.offset_factors

    def offset_factors(*args, **kwargs):
        factors = learn(*args, **kwargs) ** power
        return factors if floor is None else np.maximum(factors, floor)

    calibration.offset_factors = offset_factors
    sys.argv += ["--treatment", "factors"]


def main() -> None:
    lever = sys.argv[sys.argv.index("--lever") + 1] if "--lever" in sys.argv else None
    if lever not in LEVERS:
        raise SystemExit(f"--lever must be one of {LEVERS}")
    del sys.argv[sys.argv.index("--lever") : sys.argv.index("--lever") + 2]
    if lever == "shift":
        install_shift()
    else:
        install_factors(power=0.5 if lever == "sqrt" else 1.0, floor=1.0 if lever == "widen" else None)
    if "--label" not in sys.argv:
        sys.argv += ["--label", f"0.11.0, {lever} forced"]
    suite.main()


if __name__ == "__main__":
    main()
