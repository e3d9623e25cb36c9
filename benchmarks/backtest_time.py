"""Wall time and MASE of backtests of the default model on the M3 monthly training part.

Three modes, each printed as one line:
  --mode refit     3 rolling origins, the model refitted at each (the default backtest)
  --mode warm      the same with warm_start=True: each refit continues from the previous fold's model
  --mode origins   12 origins one month apart, fitted once (refit=False): every origin from one panel

Only the seasonal-naive baseline runs, so the figures time the model, not AutoETS. Run with
OMP_WAIT_POLICY=PASSIVE on an otherwise idle machine, e.g.:
  OMP_WAIT_POLICY=PASSIVE python benchmarks/backtest_time.py --mode refit
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
    args = parser.parse_args()
    train, info = load_m3("monthly", "train")
    params = dict(horizon=info.horizon, freq=info.freq, random_state=args.seed, progress=False)
    if args.mode == "warm":
        params["warm_start"] = True
    model = Seq2SeqForecaster(**params)
    tick = time.perf_counter()
    result = backtest(model, train, baselines=("seasonal_naive",), progress=False, **MODES[args.mode])
    wall = time.perf_counter() - tick
    summary = result.summary()
    timings = result.timings.set_index("model")
    print(
        f"mode={args.mode} seed={args.seed} windows={result.metrics['cutoff'].nunique()} wall={wall:.1f}s "
        f"fit={timings.loc['seq2seq', 'fit_seconds']:.1f}s predict={timings.loc['seq2seq', 'predict_seconds']:.1f}s "
        f"mase={summary.loc['seq2seq', 'mean_mase']:.4f} seasonal_naive={summary.loc['seasonal_naive', 'mean_mase']:.4f}"
    )


if __name__ == "__main__":
    main()
