"""The half-hourly electricity study: Victoria's demand in 2014, day-ahead forecasts from 7 daily origins, one fit.

The protocol of the study the package has been scored on since 0.2.0 (seed 0, MASE with covariates: 0.420 in 0.2.0,
0.458 in 0.3.0, 0.485 in 0.10.0 to 0.13.0, 0.547 in 0.14.0 and 0.15.0, 0.526 in 0.16.0; without them 0.636 in
0.10.0; each from its release's own code, benchmarks/history/electricity-study.md): the model is fitted once on
the data up to the first of the last 7 days, and forecasts each of those days (48 half-hours) from the day before,
with ``Temperature`` and ``WorkDay`` known ahead. Seasonal naive (the day before) is scored on the same windows.
Defaults throughout (``input_size`` None is two days, 96 half-hours), one torch thread, seeds 0, 1 and 2 unless given.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/electricity_study.py
    OMP_WAIT_POLICY=PASSIVE python benchmarks/electricity_study.py --no-covariates --seeds 0
    OMP_WAIT_POLICY=PASSIVE python benchmarks/electricity_study.py --model '{"theta_weight": 0, "holt_winters_weight": 0}'

Prints one row per seed (MASE, WQL, 80% coverage, the backtest's wall seconds, the blend the fit chose) and their means.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import pandas as pd

from forecaster import Seq2SeqForecaster, backtest
from forecaster.datasets import load_electricity

ORIGINS = 7


def run(df: pd.DataFrame, info, seed: int, covariates: bool, params: dict) -> dict:
    """One fit of the study (``df``, ``info``: ``load_electricity("half-hourly")``) with ``random_state=seed``: its
    scores, the backtest's wall seconds and the blend."""
    future = list(info.future_covariates) if covariates else []
    frame = df[["unique_id", "ds", "y", *future]]
    model = Seq2SeqForecaster(
        horizon=info.horizon,
        freq=info.freq,
        season_length=info.season_length,
        future_covariates=future,
        random_state=seed,
        progress=False,
        num_threads=1,
        **params,
    )
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = backtest(
            model, frame, n_windows=ORIGINS, step_size=info.horizon, refit=False, baselines=("seasonal_naive",), progress=False
        )
    seconds = time.perf_counter() - start
    summary = result.summary()
    own, naive = summary.loc["seq2seq"], summary.loc["seasonal_naive"]
    last = getattr(result, "last_model", None)  # the model of the fit (older releases kept none)
    calibration = getattr(getattr(last, "state_", None), "calibration", None)
    blend = {name: round(weight, 3) for name, weight in calibration.blend.items()} if calibration is not None else {}
    return {
        "seed": seed,
        "covariates": covariates,
        "mase": float(own["mean_mase"]),
        "wql": float(own.get("wql", float("nan"))),  # older releases' summaries lack these two
        "coverage_80": float(own.get("coverage", float("nan"))),
        "seasonal_naive_mase": float(naive["mean_mase"]),
        "seconds": seconds,
        "blend": json.dumps(blend),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--no-covariates", action="store_true", help="declare neither Temperature nor WorkDay")
    parser.add_argument("--model", default="{}", help="estimator parameters as JSON, on top of the defaults")
    args = parser.parse_args()
    df, info = load_electricity("half-hourly")
    rows = [run(df, info, seed, not args.no_covariates, json.loads(args.model)) for seed in args.seeds]
    table = pd.DataFrame(rows)
    print(table.round(4).to_string(index=False))
    means = {name: round(float(table[name].mean()), 4) for name in ("mase", "wql", "coverage_80", "seconds")}
    print("mean", means)


if __name__ == "__main__":
    main()
