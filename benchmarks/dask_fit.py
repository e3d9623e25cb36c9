"""Accuracy of ``fit`` on a Dask DataFrame (a sample of the series) against ``fit`` on every series.

  OMP_WAIT_POLICY=PASSIVE python benchmarks/dask_fit.py [--series 30000] [--workers 2]

A synthetic monthly panel (``make_panel``, 120 periods), the last horizon (12) of every series held
out. Two models with default parameters: one fitted on the whole pandas frame, one on the same frame
as a Dask DataFrame (``fit`` keeps a sample of the series sized to the step budget). Both forecast
every series with the pandas ``predict``; MASE over all series, and fit wall time.
"""

from __future__ import annotations

import argparse
import time

import dask
import dask.dataframe as dd
from distributed import Client, LocalCluster
from distributed_training import HORIZON, SEASON, mean_mase, split

from forecaster import Seq2SeqForecaster
from forecaster.evaluation.metrics import seasonal_scales


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=30_000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    train, test = split(args.series)
    scales = seasonal_scales(train, SEASON).rename("scale")
    print(f"{args.series} series x 120 months, horizon {HORIZON}; {len(train)} training rows", flush=True)

    tick = time.perf_counter()
    full = Seq2SeqForecaster(horizon=HORIZON, progress=False).fit(train)
    seconds = time.perf_counter() - tick
    print(f"pandas fit, every series: MASE {mean_mase(full.predict(), test, scales):.4f}, fit {seconds:.1f} s", flush=True)

    dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None})
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with Client(cluster):
            tick = time.perf_counter()
            sampled = Seq2SeqForecaster(horizon=HORIZON, progress=False).fit(dd.from_pandas(train, npartitions=4 * args.workers))
            seconds = time.perf_counter() - tick
    score = mean_mase(sampled.predict(df=train), test, scales)
    kept = len(sampled.training_end_)
    print(f"Dask fit, a sample of {kept} series: MASE {score:.4f}, fit {seconds:.1f} s", flush=True)


if __name__ == "__main__":
    main()
