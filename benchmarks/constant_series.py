"""Time and memory of finding the steps a constant series is forecast as its constant (``model/constant_series.py``).

A one-pass backtest sends each series once per fold; a panel of products that never sold is all constant series.
This builds 2,000 such series of 1,100 days with three coded future-known covariates and asks for the steps of 10
windows each (20,000 windows, 28 steps), as a 10-fold one-pass backtest would, and prints the seconds and the growth
of the process's peak memory.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/constant_series.py
    OMP_WAIT_POLICY=PASSIVE python benchmarks/constant_series.py --suite   # constant histories on the suite's panels

``--suite`` counts, per suite panel, the (series, origin) pairs of its backtest whose history up to the origin holds
one value: where the rule could change a forecast. (Bank calls, whose loading alone takes minutes, is left out.)
"""

from __future__ import annotations

import argparse
import math
import resource
import sys
import time
import types
from pathlib import Path

import numpy as np

from forecaster.model.constant_series import constant_steps

N_SERIES, WIDTH, N_COVARIATES, HORIZON, N_WINDOWS = 2000, 1100, 3, 28, 10


def suite_counts() -> None:
    """Per suite panel, the (series, origin) pairs of its 3-origin backtest whose history holds one value."""
    sys.path.insert(0, str(Path(__file__).parent))
    import suite

    for name, (_, load) in suite.PANELS.items():
        if name == "bank_calls_5min":
            continue
        df, horizon, *_ = load()
        step, hits = math.ceil(horizon / 2), 0
        for _, y in df.groupby("unique_id", sort=False)["y"]:
            values = y.to_numpy(dtype=float)
            for k in range(suite.N_ORIGINS):  # the origins: h, h + step, h + 2 step before the end
                seen = values[: len(values) - horizon - k * step]
                seen = seen[np.isfinite(seen)]
                hits += int(len(seen) >= 2 and seen.min() == seen.max())
        print(f"{name}: {hits} constant (series, origin) pairs", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", action="store_true", help="count constant histories on the suite's panels")
    if parser.parse_args().suite:
        suite_counts()
        return
    rng = np.random.default_rng(0)
    y = np.zeros((N_SERIES, WIDTH))  # never sold: constant at 0
    panel = types.SimpleNamespace(future=rng.integers(0, 5, (N_SERIES, WIDTH, N_COVARIATES)).astype(np.float32))
    seen = np.concatenate([np.zeros((N_SERIES, 1)), np.cumsum(np.isfinite(y), axis=1)], axis=1)
    series = np.repeat(np.arange(N_SERIES), N_WINDOWS)
    origins = np.tile(WIDTH - HORIZON - 1 - np.arange(N_WINDOWS) * HORIZON // 2, N_SERIES)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tick = time.perf_counter()
    steps, _ = constant_steps(panel, y, seen, series, origins, HORIZON, True)
    seconds = time.perf_counter() - tick
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1e6
    print(f"{len(series):,} windows x {HORIZON} steps: {seconds:.2f} s, peak memory +{grown:.2f} GB, {steps.mean():.3f} seen")


if __name__ == "__main__":
    main()
