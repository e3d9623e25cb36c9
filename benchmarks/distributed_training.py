"""Accuracy and wall time of training in one process against data-parallel training in two.

  OMP_WAIT_POLICY=PASSIVE python benchmarks/distributed_training.py [--series 1000] [--seeds 0 1]

A synthetic monthly panel (``make_panel``, 120 periods); the last horizon (12) of every series is held
out and scored by MASE (the series' seasonal-naive scale on the training part). Every run takes the same
step budget and the same ``batch_size``, so all consume the same total number of windows: one process
draws 128 per step, each of two ranks draws 64 from its own half of the series and DDP averages the
gradients. Rows: one process with one torch thread (the default), one process with two threads (the
same two cores used another way), and ``fit_distributed(world_size=2)`` (one thread per rank). Wall
time is the whole fit, process start-up and data preparation included.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from forecaster import Seq2SeqForecaster
from forecaster.datasets import make_panel
from forecaster.evaluation.metrics import seasonal_scales
from forecaster.scale.distributed import fit_distributed

HORIZON, SEASON = 12, 12


def split(n_series: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The panel without, and with only, the last horizon of every series."""
    df, _ = make_panel(n_series=n_series, length=120, seed=0)
    last = df.groupby("unique_id")["ds"].transform("max")
    cutoff = last - pd.DateOffset(months=HORIZON)
    return df[df["ds"] <= cutoff].reset_index(drop=True), df[df["ds"] > cutoff].reset_index(drop=True)


def mean_mase(forecast: pd.DataFrame, test: pd.DataFrame, scales: pd.Series) -> float:
    scored = test.merge(forecast, on=["unique_id", "ds"], how="left")
    error = (scored["y"] - scored["y_hat"]).abs().groupby(scored["unique_id"]).mean()
    return float((error / scales.reindex(error.index)).replace(np.inf, np.nan).mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=1000)
    parser.add_argument("--max-steps", type=int, default=None, help="None: the default budget for the panel")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    args = parser.parse_args()
    train, test = split(args.series)
    scales = seasonal_scales(train, SEASON).rename("scale")
    print(f"{args.series} series x 120 months, horizon {HORIZON}; {len(train)} training rows")
    runs = (("1 process, 1 thread", 1, 1), ("1 process, 2 threads", 1, 2), ("2 processes (DDP, gloo), 1 thread each", 2, 1))
    for seed in args.seeds:
        for label, world_size, threads in runs:
            model = Seq2SeqForecaster(
                horizon=HORIZON, max_steps=args.max_steps, progress=False, num_threads=threads, random_state=seed
            )
            tick = time.perf_counter()
            model.fit(train) if world_size == 1 else fit_distributed(model, train, world_size=world_size)
            seconds = time.perf_counter() - tick
            steps = len(model.train_result_.train_loss)
            score = mean_mase(model.predict(), test, scales)
            print(f"seed {seed} | {label}: MASE {score:.4f}, fit {seconds:.1f} s, {steps} steps ({steps / seconds:.1f} steps/s)")


if __name__ == "__main__":
    main()
