"""What the forecast says on closed days: the suite's synthetic daily retail panel, where ``open`` (known ahead) is 0.

On a closed day every series sells nothing, and the calendar says so in advance. The script backtests the panel as
the suite does (3 rolling origins, h=14, a refit at each) and prints, over the forecast points whose ``open`` is 0:

- ``median_share``: the median's magnitude as a share of the series' mean level (its mean target up to the first
  origin), mean over closed points, and its 95th percentile;
- ``zero_held_80``: the share of closed points whose 80% interval (q10..q90) holds the zero that occurred;
- ``closed_sum``: the panel's summed median over closed points (the truth is 0);
- MASE and WQL of the whole backtest, so that a variant that gets closed days right at the cost of open ones shows.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/closed_days.py
    OMP_WAIT_POLICY=PASSIVE python benchmarks/closed_days.py --model '{"theta_weight": 0, "holt_winters_weight": 0}'
    OMP_WAIT_POLICY=PASSIVE python benchmarks/closed_days.py --drop holiday

About 4 minutes on 2 cores per variant.
"""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
import pandas as pd

from forecaster import Seq2SeqForecaster, backtest
from forecaster.datasets import make_daily_retail

N_ORIGINS = 3


def closed_day_figures(forecasts: pd.DataFrame, data: pd.DataFrame, first_origin: pd.Timestamp) -> dict[str, float]:
    """The closed-day figures of a backtest's ``forecasts`` (``y``, ``y_hat``, ``y_hat_q10``, ``y_hat_q90``) against
    the panel ``data``."""
    level = data[data["ds"] <= first_origin].groupby("unique_id")["y"].mean()
    rows = forecasts.merge(data[["unique_id", "ds", "open"]], on=["unique_id", "ds"], how="left")
    rows = rows.assign(y=rows["y"].astype(float))
    closed = rows[rows["open"] == 0]
    share = closed["y_hat"].abs() / closed["unique_id"].map(level).clip(lower=1e-9)
    held = (closed["y_hat_q10"] <= 0) & (closed["y_hat_q90"] >= 0)
    return {
        "closed_points": len(closed),
        "median_share": float(share.mean()),
        "median_share_p95": float(share.quantile(0.95)),
        "zero_held_80": float(held.mean()),
        "closed_sum": float(closed["y_hat"].sum()),
        "open_sum_truth": float(rows.loc[rows["open"] == 1, "y"].sum()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="{}", help="JSON of Seq2SeqForecaster parameters (default: the defaults)")
    parser.add_argument("--drop", nargs="*", default=[], help="future-known columns not to declare (promo, holiday, open)")
    args = parser.parse_args()
    df, info = make_daily_retail()
    future = [c for c in info.future_covariates if c not in args.drop]
    model = Seq2SeqForecaster(
        horizon=info.horizon,
        freq=info.freq,
        season_length=info.season_length,
        future_covariates=future,
        progress=False,
        num_threads=1,
        **json.loads(args.model),
    )
    result = backtest(model, df, n_windows=N_ORIGINS, step_size=math.ceil(info.horizon / 2), baselines=(), progress=False)
    own = result.forecasts.rename(columns={"seq2seq": "y_hat", "seq2seq_q10": "y_hat_q10", "seq2seq_q90": "y_hat_q90"})
    first_origin = pd.Timestamp(own["cutoff"].min())
    figures = closed_day_figures(own, df, first_origin)
    summary = result.summary().loc["seq2seq"]
    figures.update(mase=float(summary["mean_mase"]), wql=float(summary["wql"]), seconds=float(summary["fit_seconds"]))
    print(json.dumps({"model": json.loads(args.model), "declared": future, **{k: round(v, 4) for k, v in figures.items()}}))


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
