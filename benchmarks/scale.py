"""Time and peak memory of fit and predict on large synthetic panels, pandas and Dask.

  OMP_WAIT_POLICY=PASSIVE python benchmarks/scale.py [--sizes 10000 100000] [--million] [--workers 2]

For each size, synthetic monthly panels of 120 periods (``make_panel``, no covariates declared, default
parameters: the step budget resolves to its cap of 1500 steps). Each measurement runs in a fresh
process, so that every peak RSS (``ru_maxrss``) belongs to its own phase:

- pandas: build the panel, ``fit`` (time; peak RSS after fit), ``predict(df=df)`` (time; peak RSS
  after predict, which includes the fit's). The model is saved for the next step.
- dask: build the panel, load the model, ``predict(df=dd.from_pandas(df, npartitions))`` on a
  ``LocalCluster`` of ``--workers`` processes with one thread each, then ``.compute()`` (time from the
  call to the computed frame; peak RSS of the client process and of each worker). Twice: with Dask's
  default worker environment, which sets ``MALLOC_TRIM_THRESHOLD_=65536``, and with that variable unset.
  Setting it switches off glibc's adaptive mmap threshold, so every large temporary array (the
  Holt-Winters fit works on 16 MB blocks) is mapped and faulted in afresh: that fit ran 1.8x slower in
  such a worker than in a plain process.
- dask-fit: build the panel, ``fit(dd.from_pandas(df, npartitions))`` (windows of every series drawn on the
  workers and streamed to the client; ``MALLOC_TRIM_THRESHOLD_`` unset): time, series the client keeps,
  peak RSS of the client and the workers.

``--paths`` picks among ``pandas``, ``dask`` (which needs the pandas fit's model) and ``dask-fit``.

- parquet: the panel written as Parquet files of 25,000 series each, sorted by id, chunk by chunk (a
  separate process); then, through a ``LocalCluster`` of ``--workers`` processes with ``--memory-limit``
  each, ``fit(dd.read_parquet(folder, index="unique_id", calculate_divisions=True))`` (windows drawn on
  the workers; ``--steps`` sets the budget) and ``predict(df=ddf).to_parquet(...)``: every series forecast
  on the workers, each partition where it lies (no shuffle), nothing collected on the client. Time, sample,
  peak RSS of the client and the workers.

``--million`` adds 10^6 series (about 120 M rows): on the pandas paths tens of GB, not for the 24 GiB
development machine; ``--paths parquet`` runs it.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time

MB = 1024.0  # ru_maxrss is in KiB on Linux


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / MB


def panel(n_series: int):
    from forecaster.datasets import make_panel

    df, _ = make_panel(n_series=n_series, length=120, seed=0, static=False)
    return df.drop(columns=["promo", "traffic"])


def run_pandas(n_series: int, model_dir: str) -> dict:
    from forecaster import Seq2SeqForecaster

    df = panel(n_series)
    tick = time.perf_counter()
    model = Seq2SeqForecaster(horizon=12, progress=False).fit(df)
    fit_s, fit_mb = time.perf_counter() - tick, peak_mb()
    model.save(model_dir)
    tick = time.perf_counter()
    forecast = model.predict(df=df)
    predict_s = time.perf_counter() - tick
    steps = len(model.train_result_.train_loss)
    return dict(
        rows=len(df), fit_s=fit_s, fit_peak_mb=fit_mb, steps=steps, predict_s=predict_s, peak_mb=peak_mb(), out=len(forecast)
    )


def run_dask(n_series: int, model_dir: str, workers: int, trim: bool) -> dict:
    import dask
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    from forecaster import Seq2SeqForecaster

    if not trim:  # None unsets the variable in the workers' environment
        dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None})

    df = panel(n_series)
    model = Seq2SeqForecaster.load(model_dir)
    npartitions = 4 * workers
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with Client(cluster) as client:
            ddf = dd.from_pandas(df, npartitions=npartitions)
            tick = time.perf_counter()
            forecast = model.predict(df=ddf).compute()
            predict_s = time.perf_counter() - tick
            worker_mb = sorted(client.run(peak_mb).values())
    return dict(
        rows=len(df),
        partitions=npartitions,
        predict_s=predict_s,
        client_peak_mb=peak_mb(),
        worker_peak_mb=worker_mb,
        out=len(forecast),
    )


def run_dask_fit(n_series: int, workers: int) -> dict:
    import dask
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    from forecaster import Seq2SeqForecaster

    dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None})
    df = panel(n_series)
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with Client(cluster) as client:
            ddf = dd.from_pandas(df, npartitions=4 * workers)
            tick = time.perf_counter()
            model = Seq2SeqForecaster(horizon=12, progress=False).fit(ddf)
            fit_s = time.perf_counter() - tick
            worker_mb = sorted(client.run(peak_mb).values())
    steps = len(model.train_result_.train_loss)
    return dict(fit_s=fit_s, sample=len(model.training_end_), steps=steps, client_peak_mb=peak_mb(), worker_peak_mb=worker_mb)


# Series per Parquet file (one partition each) on the Parquet path.
SERIES_PER_FILE = 25_000


def write_parquet(n_series: int, folder: str) -> dict:
    """The panel as Parquet files sorted by id, written chunk by chunk (never the whole panel in memory)."""
    import pathlib

    from forecaster.datasets import make_panel

    pathlib.Path(folder).mkdir(parents=True, exist_ok=True)
    rows = 0
    for index, start in enumerate(range(0, n_series, SERIES_PER_FILE)):
        size = min(SERIES_PER_FILE, n_series - start)
        df, _ = make_panel(n_series=size, length=120, seed=index, static=False)
        df = df.drop(columns=["promo", "traffic"])
        df["unique_id"] = f"C{index:04d}-" + df["unique_id"].astype(str)  # ids sort by file, then within it
        df.sort_values(["unique_id", "ds"]).set_index("unique_id").to_parquet(pathlib.Path(folder) / f"part-{index:04d}.parquet")
        rows += len(df)
    return dict(rows=rows, files=index + 1)


def run_parquet(folder: str, workers: int, steps: int | None, memory_limit: str) -> dict:
    """Fit on windows streamed from the Parquet panel's partitions, then forecast every series into Parquet, on the cluster."""
    import dask
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    from forecaster import Seq2SeqForecaster

    dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None})
    cluster = LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None, memory_limit=memory_limit
    )
    with cluster, Client(cluster) as client:
        ddf = dd.read_parquet(folder, index="unique_id", calculate_divisions=True)
        tick = time.perf_counter()
        model = Seq2SeqForecaster(horizon=12, max_steps=steps, progress=False).fit(ddf)
        fit_s = time.perf_counter() - tick
        fit_client_mb = peak_mb()
        tick = time.perf_counter()
        out = f"{folder}-forecast"
        model.predict(df=ddf).to_parquet(out)
        predict_s = time.perf_counter() - tick
        worker_mb = sorted(client.run(peak_mb).values())
        forecast_rows = int(dd.read_parquet(out).shape[0].compute())
    return dict(
        fit_s=fit_s,
        sample=len(model.training_end_),
        steps=len(model.train_result_.train_loss),
        blend=model.fitted().blend,
        fit_client_mb=fit_client_mb,
        predict_s=predict_s,
        client_peak_mb=peak_mb(),
        worker_peak_mb=worker_mb,
        forecast_rows=forecast_rows,
    )


def child(args: list[str]) -> dict:
    """One measurement in a fresh process; its JSON result is the last line it prints."""
    done = subprocess.run([sys.executable, __file__, *args], check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--million", action="store_true", help="add 10^6 series")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--paths", nargs="+", choices=("pandas", "dask", "dask-fit", "parquet"), default=["pandas", "dask", "dask-fit"]
    )
    parser.add_argument("--steps", type=int, default=None, help="parquet path: training steps (default: the default budget)")
    parser.add_argument("--memory-limit", default="3GB", help="parquet path: each worker's memory limit")
    parser.add_argument("--child", nargs=3, metavar=("PATH", "N", "MODEL_DIR"), help=argparse.SUPPRESS)
    parser.add_argument("--no-trim", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        path, n, model_dir = args.child
        if path == "write-parquet":
            result = write_parquet(int(n), model_dir)
        elif path == "parquet":
            result = run_parquet(model_dir, args.workers, args.steps, args.memory_limit)
        elif path == "pandas":
            result = run_pandas(int(n), model_dir)
        elif path == "dask-fit":
            result = run_dask_fit(int(n), args.workers)
        else:
            result = run_dask(int(n), model_dir, args.workers, not args.no_trim)
        print(json.dumps(result))
        return
    sizes = [*args.sizes, *([1_000_000] if args.million else [])]
    for n in sizes:
        with tempfile.TemporaryDirectory() as model_dir:
            if "pandas" in args.paths or "dask" in args.paths:
                pandas = child(["--child", "pandas", str(n), model_dir])
                print(
                    f"{n} series ({pandas['rows']} rows), pandas: fit {pandas['fit_s']:.1f} s ({pandas['steps']} steps), "
                    f"peak RSS {pandas['fit_peak_mb']:.0f} MB; predict {pandas['predict_s']:.1f} s, "
                    f"peak RSS {pandas['peak_mb']:.0f} MB",
                    flush=True,
                )
            for trim, label in ((True, "Dask's default MALLOC_TRIM_THRESHOLD_=65536"), (False, "MALLOC_TRIM_THRESHOLD_ unset")):
                if "dask" not in args.paths:
                    break
                flags = ["--workers", str(args.workers), *([] if trim else ["--no-trim"])]
                lazy = child(["--child", "dask", str(n), model_dir, *flags])
                print(
                    f"{n} series, dask predict ({args.workers} workers x 1 thread, {lazy['partitions']} partitions, {label}): "
                    f"{lazy['predict_s']:.1f} s, peak RSS client {lazy['client_peak_mb']:.0f} MB, "
                    f"workers {', '.join(f'{mb:.0f}' for mb in lazy['worker_peak_mb'])} MB",
                    flush=True,
                )
            if "parquet" in args.paths:
                folder = f"{model_dir}/panel"
                written = child(["--child", "write-parquet", str(n), folder])
                flags = ["--workers", str(args.workers), "--memory-limit", args.memory_limit]
                flags += [] if args.steps is None else ["--steps", str(args.steps)]
                run = child(["--child", "parquet", str(n), folder, *flags])
                print(
                    f"{n} series ({written['rows']} rows in {written['files']} Parquet files sorted by id), through a "
                    f"LocalCluster of {args.workers} workers x 1 thread, {args.memory_limit} each: fit {run['fit_s']:.1f} s "
                    f"({run['steps']} steps on windows drawn on the workers; {run['sample']} series kept on the client; "
                    f"blend chosen {run['blend']}), client peak RSS "
                    f"{run['fit_client_mb']:.0f} MB after fit; predict to Parquet {run['predict_s']:.1f} s "
                    f"({run['forecast_rows']} rows), peak RSS client {run['client_peak_mb']:.0f} MB, workers "
                    f"{', '.join(f'{mb:.0f}' for mb in run['worker_peak_mb'])} MB",
                    flush=True,
                )
            if "dask-fit" in args.paths:
                fit = child(["--child", "dask-fit", str(n), model_dir, "--workers", str(args.workers)])
                print(
                    f"{n} series, dask fit ({args.workers} workers x 1 thread): {fit['fit_s']:.1f} s ({fit['steps']} steps; "
                    f"{fit['sample']} series kept on the client), peak RSS client {fit['client_peak_mb']:.0f} MB, "
                    f"workers {', '.join(f'{mb:.0f}' for mb in fit['worker_peak_mb'])} MB",
                    flush=True,
                )


if __name__ == "__main__":
    main()
