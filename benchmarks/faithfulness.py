"""Is the default model's attention faithful? Occlusion ratios and attention profiles on known and real panels.

Panels:
  seasonal   30 noise-free period-12 monthly series of 144 months (horizon 12, input 36, 600 steps)
  tourism    the Tourism quarterly training part (427 series; 2 points occluded, forecasts from the end)
  m3         the M3 monthly training part (1428 series; 3 points occluded)

Prints the occlusion ratio (mean change of the forecast when the most attended history points
are replaced by the series' mean, over the same for the least attended points), the mean
absolute changes, and the lags (relative to the target) where the attention profile peaks.
  OMP_WAIT_POLICY=PASSIVE python benchmarks/faithfulness.py --panel seasonal --model '{"attention_values": "observations"}'
"""

from __future__ import annotations

import argparse
import json
import time

import pandas as pd

from forecaster import Seq2SeqForecaster
from forecaster.datasets import load_m3, load_tourism, make_panel
from forecaster.evaluation.faithfulness import occlusion
from forecaster.plots import attention_profile


def seasonal_panel() -> tuple[pd.DataFrame, dict]:
    df, _ = make_panel(
        n_series=30, length=144, seed=0, trend=0.0, noise=0.0, future_effect=0.0, static=False, short_share=0.0, missing_share=0.0
    )
    return df[["unique_id", "ds", "y"]], dict(horizon=12, input_size=36, max_steps=600, freq="MS"), 3


def tourism_panel():
    df, info = load_tourism("quarterly", "train")
    return df, dict(horizon=info.horizon, freq=info.freq), 2


def m3_panel():
    df, info = load_m3("monthly", "train")
    return df, dict(horizon=info.horizon, freq=info.freq), 3


PANELS = {"seasonal": seasonal_panel, "tourism": tourism_panel, "m3": m3_panel}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--panel", choices=sorted(PANELS), required=True)
    parser.add_argument("--model", default="{}", help="JSON of Seq2SeqForecaster parameters")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    df, params, n_points = PANELS[args.panel]()
    params = {**params, "progress": False, "random_state": args.seed, **json.loads(args.model)}
    tick = time.perf_counter()
    model = Seq2SeqForecaster(**params).fit(df)
    result = occlusion(model, df, n_points=n_points, max_series=None)
    profile = attention_profile(model.explain(df=df), relative_to="target")
    mean = profile["mean"]
    peaks = list(mean.sort_values(ascending=False).index[:3])
    season = model.season_length_
    on_season = float(mean[[lag for lag in mean.index if lag % season == 0]].sum() / mean.sum())
    print(
        f"panel={args.panel} model={json.dumps(json.loads(args.model))} seed={args.seed} ratio={result.ratio:.2f} "
        f"most={result.most_attended:.4f} least={result.least_attended:.4f} series={result.n_series} "
        f"profile_peaks={peaks} on_season_multiples={on_season:.3f} seconds={time.perf_counter() - tick:.0f}"
    )


if __name__ == "__main__":
    main()
