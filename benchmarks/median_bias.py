"""Where a low median comes from: the median's hit rate of the network alone, each partner alone and the blend.

For each suite panel named, one backtest (3 origins, as the suite scores them) per variant: the defaults; the
network alone (both partners' weights 0); Theta alone and damped Holt-Winters alone (weight 1); and the network alone
fitted from scratch (no prior). Prints MASE, the median's hit rate (share of actuals at or below it, pooled over
origins), AutoETS's on the same windows, and 80% coverage.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/median_bias.py m3_quarterly_draw50 m3_monthly_draw50 tourism_quarterly_draw50
"""

from __future__ import annotations

import argparse
import math
import warnings

from suite import PANELS

from forecaster import Seq2SeqForecaster, backtest

VARIANTS = {
    "defaults": {},
    "network alone": {"theta_weight": 0.0, "holt_winters_weight": 0.0},
    "Theta alone": {"theta_weight": 1.0, "holt_winters_weight": 0.0},
    "Holt-Winters alone": {"theta_weight": 0.0, "holt_winters_weight": 1.0},
    "network from scratch": {"init": "scratch", "theta_weight": 0.0, "holt_winters_weight": 0.0},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("panels", nargs="+", choices=list(PANELS))
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=UserWarning)
    for name in args.panels:
        _, load = PANELS[name]
        df, horizon, season, freq, future = load()
        roles = {"future_covariates": list(future)} if future else {}
        for variant, params in VARIANTS.items():
            model = Seq2SeqForecaster(
                horizon=horizon, freq=freq, season_length=season, progress=False, num_threads=1, **roles, **params
            )
            result = backtest(model, df, n_windows=3, step_size=math.ceil(horizon / 2), progress=False)
            summary, rates = result.summary(), result.calibration()
            print(
                f"{name:28s} {variant:22s} MASE {summary.loc['seq2seq', 'mean_mase']:.4f} "
                f"median hit rate {rates.loc['seq2seq', 0.5]:.3f} (AutoETS {rates.loc['auto_ets', 0.5]:.3f}) "
                f"coverage {summary.loc['seq2seq', 'coverage']:.3f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
