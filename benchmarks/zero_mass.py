"""Quantiles at zero below a series' share of zeros: a measurement (not in the package).

    OMP_WAIT_POLICY=PASSIVE python benchmarks/zero_mass.py intermittent
    OMP_WAIT_POLICY=PASSIVE python benchmarks/zero_mass.py suite --panels retail_daily_synthetic --out /tmp/z.csv

A series that is zero on a share p of its periods has, if that share holds ahead, every quantile of level below p at
zero, its median included where p is over one half. The network's quantiles come near zero there but not to it
(docs/model.md, ``nonnegative``). Here, after the floor at zero, each window of a series never negative sets its
quantiles of level at most p to zero, p being the share of zeros among its observed targets over the window the
network reads (``input_size`` periods up to the origin; closed periods, forecast at zero anyway, count as the history
holds them). ``intermittent`` runs ``intermittent_median.py``, ``suite`` runs ``suite.py`` (seasonal naive the only
baseline; the other arguments are its own).
"""

from __future__ import annotations

import sys

import numpy as np

from forecaster.model import inference

_floored = inference.floored


def _zero_mass(values, parts, state, panel, series, origins):
    values, parts = _floored(values, parts, state, panel, series, origins)
    if state.nonnegative == "none" or len(series) == 0:
        return values, parts
    y = inference.target_values(panel, state)
    rows_of, at = np.unique(series, return_inverse=True)
    observed, zero = np.isfinite(y[rows_of]), y[rows_of] == 0
    seen = np.concatenate([np.zeros((len(rows_of), 1)), np.cumsum(observed, axis=1)], axis=1)
    zeros = np.concatenate([np.zeros((len(rows_of), 1)), np.cumsum(zero, axis=1)], axis=1)
    low = np.maximum(origins + 1 - state.input_size, 0)
    count = seen[at, origins + 1] - seen[at, low]
    share = np.where(count > 0, (zeros[at, origins + 1] - zeros[at, low]) / np.maximum(count, 1), 0.0)
    never_negative = (values >= 0).all(axis=(1, 2))  # the floor held: the series is never negative
    levels = np.asarray(state.quantiles)
    below = (levels[None, :] <= share[:, None]) & never_negative[:, None]  # (B, Q)
    moved = np.where(below[:, None, :], 0.0, values)
    if parts is not None:
        lift = moved[:, :, state.median_index] - values[:, :, state.median_index]
        if lift.any():
            parts = parts.floored(lift)
    return moved, parts


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in ("intermittent", "suite"):
        raise SystemExit(__doc__)
    what = sys.argv.pop(1)
    inference.floored = _zero_mass
    if what == "intermittent":
        import intermittent_median

        intermittent_median.main()
        return
    import suite

    suite.main_against_seasonal_naive("0.17.6, quantiles at zero below the window's share of zeros (not shipped)")


if __name__ == "__main__":
    main()
