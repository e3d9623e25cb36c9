"""Accuracy of ``fit`` on a Dask DataFrame (windows streamed from the workers) against ``fit`` of the pandas frame.

  OMP_WAIT_POLICY=PASSIVE python benchmarks/dask_fit.py [--series 30000] [--workers 2] [--share 0.1]

A synthetic monthly panel (``make_panel``, 120 periods), the last horizon (12) of every series held
out. Models with default parameters: one fitted on the whole pandas frame, one on the same frame as a
Dask DataFrame (``fit`` trains on windows drawn on the workers, with the whole panel's step budget), and
with ``--share F`` one fitted on a share of the series (``fit_dask(model, ddf, fraction=F)``). All forecast
every series with the pandas ``predict``; MASE over all series, and fit wall time.
"""

from __future__ import annotations

import argparse
import time
import warnings

import dask
import dask.dataframe as dd
from distributed import Client, LocalCluster
from distributed_training import HORIZON, SEASON, mean_mase, split

from forecaster import Seq2SeqForecaster
from forecaster.evaluation.metrics import seasonal_scales
from forecaster.scale.dask_fit import fit_dask


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=30_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--share", type=float, default=None, help="also fit a share of the series (fit_dask's fraction)")
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
        with Client(cluster), warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the fit says which series the client kept
            ddf = dd.from_pandas(train, npartitions=4 * args.workers)
            tick = time.perf_counter()
            streamed = Seq2SeqForecaster(horizon=HORIZON, progress=False).fit(ddf)
            seconds = time.perf_counter() - tick
            score = mean_mase(streamed.predict(df=train), test, scales)
            steps = len(streamed.train_result_.train_loss)
            print(f"Dask fit, windows of every series: MASE {score:.4f}, fit {seconds:.1f} s, {steps} steps", flush=True)
            if args.share is not None:
                tick = time.perf_counter()
                shared = fit_dask(Seq2SeqForecaster(horizon=HORIZON, progress=False), ddf, fraction=args.share)
                seconds = time.perf_counter() - tick
                score = mean_mase(shared.predict(df=train), test, scales)
                kept = len(shared.training_end_)
                print(f"Dask fit of a share of {args.share:g} ({kept} series): MASE {score:.4f}, fit {seconds:.1f} s", flush=True)


if __name__ == "__main__":
    main()
