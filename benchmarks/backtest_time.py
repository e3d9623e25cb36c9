"""Wall time and MASE of backtests of the default model on the M3 monthly training part.

Three modes, each printed as one line:
  --mode refit     3 rolling origins, the model refitted at each (the default backtest)
  --mode warm      the same with warm_start=True: each refit continues from the previous fold's model
  --mode origins   12 origins one month apart, fitted once (refit=False): every origin from one panel

Only the seasonal-naive baseline runs, so the figures time the model, not AutoETS (``--auto-ets`` adds it).
``--dask-workers N`` runs the backtest with an active client of a ``LocalCluster`` of N worker processes with
one thread each: the baselines, and the refitted folds of ``--mode refit`` (independent ones), then run on the
workers. ``--dask-frame`` (with ``--dask-workers``) backtests the panel as a Dask DataFrame of 8 partitions
instead: each fold a Dask fit (on windows drawn on the workers when the fold has more than ``--sample-windows``,
by default 100,000; M3 monthly's folds have fewer, so they are fitted whole), every partition forecast and scored
where it lies. Run with
OMP_WAIT_POLICY=PASSIVE on an otherwise idle machine, e.g.:
  OMP_WAIT_POLICY=PASSIVE python benchmarks/backtest_time.py --mode refit [--dask-workers 2]
"""

from __future__ import annotations

import argparse
import time

from forecaster import Seq2SeqForecaster, backtest
from forecaster.datasets import load_m3

MODES = {
    "refit": dict(n_windows=3, refit=True),
    "warm": dict(n_windows=3, refit=True),
    "origins": dict(n_windows=12, step_size=1, refit=False),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=sorted(MODES), required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dask-workers", type=int, default=0, help="run with a LocalCluster of this many workers")
    parser.add_argument("--auto-ets", action="store_true", help="also run the AutoETS baseline")
    parser.add_argument("--dask-frame", action="store_true", help="backtest a Dask DataFrame (needs --dask-workers)")
    parser.add_argument(
        "--sample-windows", type=int, default=None, help="with --dask-frame: the Dask fit's client sample (ANCHOR_WINDOWS)"
    )
    args = parser.parse_args()
    if args.dask_workers:
        from distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=args.dask_workers, threads_per_worker=1, dashboard_address=None)
        with cluster, Client(cluster):
            run(args)
    else:
        run(args)


def run(args: argparse.Namespace) -> None:
    train, info = load_m3("monthly", "train")
    params = dict(horizon=info.horizon, freq=info.freq, random_state=args.seed, progress=False)
    if args.mode == "warm":
        params["warm_start"] = True
    model = Seq2SeqForecaster(**params)
    tick = time.perf_counter()
    baselines = ("seasonal_naive", "auto_ets") if args.auto_ets else ("seasonal_naive",)
    if args.dask_frame:
        import dask.dataframe as dd

        from forecaster.scale import dask_fit

        if args.sample_windows:  # below a fold's windows, the fold's fit streams its windows from the workers
            dask_fit.ANCHOR_WINDOWS = args.sample_windows

        train = dd.from_pandas(train, npartitions=8)
    result = backtest(model, train, baselines=baselines, progress=False, **MODES[args.mode])
    wall = time.perf_counter() - tick
    summary = result.summary()
    timings = result.timings.set_index("model")
    print(
        f"mode={args.mode} seed={args.seed} dask_workers={args.dask_workers} dask_frame={args.dask_frame} "
        f"windows={result.metrics['cutoff'].nunique()} wall={wall:.1f}s "
        f"fit={timings.loc['seq2seq', 'fit_seconds']:.1f}s predict={timings.loc['seq2seq', 'predict_seconds']:.1f}s "
        f"mase={summary.loc['seq2seq', 'mean_mase']:.4f} seasonal_naive={summary.loc['seasonal_naive', 'mean_mase']:.4f}"
    )


if __name__ == "__main__":
    main()
