"""Digests of forecasts from every way of running the model: a structure-only change must print the same lines.

Each line is a name and the SHA-256 (first 16 hex digits) of the exact bytes of a result: a backtest's forecasts,
metrics, quantile scores, attention frame and reported settings for every way of running folds (refit every fold,
every k folds, warm start, one pass without refits, sliding windows, future-known covariates, an active Dask client,
a Dask frame), ``predict`` and ``explain`` of a fitted model, the forecasts of the committed 0.3.0 model file, and
direct fits by where they start (the prior, scratch, a fine-tune, a warm start, ``from_pretrained``, a saved model).

    OMP_WAIT_POLICY=PASSIVE python benchmarks/fingerprint.py > before.txt
    ... change the structure ...
    OMP_WAIT_POLICY=PASSIVE python benchmarks/fingerprint.py | diff before.txt -

``--no-dask`` leaves out the two Dask runs (they start a local cluster). Runs in about a minute on 2 cores.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
import warnings
from pathlib import Path

import pandas as pd

from forecaster import Seq2SeqForecaster, backtest
from forecaster.datasets import make_panel

FAST = dict(hidden_size=16, max_steps=20, batch_size=32, progress=False, random_state=0, input_size=12)
MODEL_0_3_0 = Path(__file__).resolve().parents[1] / "tests" / "data" / "model_0_3_0"


def digest(obj) -> str:
    """SHA-256 of a frame's values, index and dtypes (or of a JSON-able object), first 16 hex digits."""
    if obj is None:
        return "none"
    if isinstance(obj, pd.DataFrame):
        frame = obj.reset_index(drop=True)
        payload = pd.util.hash_pandas_object(frame, index=True).to_numpy().tobytes()
        payload += repr(list(zip(frame.columns, map(str, frame.dtypes), strict=True))).encode()
    else:
        payload = json.dumps(obj, sort_keys=True, default=str).encode()
    return hashlib.sha256(payload).hexdigest()[:16]


def print_result(name: str, result) -> None:
    forecasts = result.forecasts.compute() if hasattr(result.forecasts, "compute") else result.forecasts
    keys = [c for c in ("unique_id", "cutoff", "ds") if c in forecasts]
    forecasts = forecasts.sort_values(keys, kind="stable").reset_index(drop=True)
    metrics = result.metrics.sort_values(["unique_id", "cutoff", "model"], kind="stable").reset_index(drop=True)
    settings = {k: v for k, v in result.settings.items() if k not in ("seconds", "n_jobs", "dask")}
    parts = {
        "forecasts": digest(forecasts),
        "metrics": digest(metrics),
        "quantiles": digest(result.quantile_metrics),
        "attention": digest(result.attention),
        "skipped": digest(result.skipped),
        "settings": digest(settings),
    }
    print(name, " ".join(f"{k}={v}" for k, v in parts.items()), flush=True)


def print_starts(plain: pd.DataFrame) -> None:
    """Direct fits by where they start: the default (the prior on this small monthly panel), scratch, a fine-tune of
    the prior, a warm start fitted twice, the prior as it is (``from_pretrained``), and a saved and loaded model."""
    quiet = dict(progress=False, random_state=0)
    head = plain[plain["ds"] < plain["ds"].max() - pd.DateOffset(months=6)]
    fits = {
        "fit_default_prior": Seq2SeqForecaster(horizon=6, **quiet),
        "fit_scratch": Seq2SeqForecaster(horizon=6, init="scratch", **FAST),
        "fit_pretrained_tune": Seq2SeqForecaster(horizon=6, init="pretrained", max_steps=10, **quiet),
    }
    for name, model in fits.items():
        model.fit(plain)
        print(name, digest(model.predict()), digest(model.explain()), flush=True)
    warm = Seq2SeqForecaster(horizon=6, warm_start=True, **FAST).fit(head)
    first = digest(warm.predict())
    print("fit_warm_twice", first, digest(warm.fit(plain).predict()), flush=True)
    zero = Seq2SeqForecaster.from_pretrained(6, progress=False)
    print("from_pretrained", digest(zero.predict(plain)), digest(zero.explain(plain)), digest(zero.predict(head)), flush=True)
    print("prior_backtest", end=" ")
    print_result("", backtest(Seq2SeqForecaster(horizon=6, **quiet), plain, n_windows=2, refit=True, progress=False))
    with tempfile.TemporaryDirectory() as folder:
        fits["fit_default_prior"].save(folder)
        print("saved_loaded", digest(Seq2SeqForecaster.load(folder).predict()), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-dask", action="store_true", help="leave out the Dask client and Dask frame runs")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    df, _ = make_panel(n_series=8, length=48, seed=1, short_share=0.25, missing_share=0.02)
    plain = df[["unique_id", "ds", "y"]]
    runs = {
        "refit_every_fold": (dict(), dict(refit=True)),
        "refit_every_2": (dict(), dict(refit=2, n_windows=3)),
        "warm_start": (dict(warm_start=True), dict(refit=True)),
        "one_pass": (dict(), dict(refit=False)),
        "sliding_no_refit": (dict(), dict(refit=False, window="sliding")),
        "sliding_refit": (dict(), dict(refit=True, window="sliding")),
        "point_forecasts": (dict(quantiles=None), dict(refit=False)),
    }
    for name, (params, options) in runs.items():
        model = Seq2SeqForecaster(horizon=6, **FAST, **params)
        print_result(name, backtest(model, plain, n_windows=options.pop("n_windows", 2), progress=False, **options))
    covariates = Seq2SeqForecaster(horizon=6, future_covariates=["promo"], past_covariates=["traffic"], **FAST)
    print_result("covariates", backtest(covariates, df.drop(columns=["group", "size"]), n_windows=2, progress=False))
    observations = Seq2SeqForecaster(horizon=6, attention_values="observations", **FAST)
    print_result("observations_one_pass", backtest(observations, plain, n_windows=2, refit=False, progress=False))

    model = Seq2SeqForecaster(horizon=6, **FAST).fit(plain)
    print("predict", digest(model.predict()))
    print("explain", digest(model.explain()))
    loaded = Seq2SeqForecaster.load(MODEL_0_3_0)
    print("model_0_3_0", digest(loaded.predict()))
    print_starts(plain)

    if not args.no_dask:
        import dask.dataframe as dd
        from distributed import Client, LocalCluster

        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True) as cluster, Client(cluster):
            model = Seq2SeqForecaster(horizon=6, **FAST)
            print_result("dask_client_folds", backtest(model, plain, n_windows=2, progress=False))
            frame = dd.from_pandas(plain, npartitions=2)
            print_result("dask_frame", backtest(Seq2SeqForecaster(horizon=6, **FAST), frame, n_windows=2, progress=False))


if __name__ == "__main__":
    main()
