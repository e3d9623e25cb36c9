"""Are the default model's maps and shares faithful? Occlusion ratios, attention profiles and explain's cost.

Panels:
  seasonal   30 noise-free period-12 monthly series of 144 months (horizon 12, input 36, 600 steps)
  seasonal_defaults   the same series, every parameter at its default but the horizon (12)
  tourism    the Tourism quarterly training part (427 series; 2 points occluded, forecasts from the end)
  m3         the M3 monthly training part (1428 series; 3 points occluded)

Prints the occlusion ratio of the maps (mean change of the forecast when the most attended history points
are replaced by the series' mean, over the same for the least attended points) and of the shares (the points
with the largest against the smallest absolute ``contribution``), the lags (relative to the target) where the
attention profile peaks, and the seconds of ``predict`` and of ``explain`` (the shares) of 100 series, best of 3.
  OMP_WAIT_POLICY=PASSIVE python benchmarks/faithfulness.py --panel seasonal --model '{"attention_values": "observations"}'
"""

from __future__ import annotations

import argparse
import json
import time

import pandas as pd

from forecaster import Seq2SeqForecaster
from forecaster.datasets import load_m3, load_tourism, make_panel
from forecaster.model.faithfulness import occlusions
from forecaster.plots import attention_profile


def seasonal_panel() -> tuple[pd.DataFrame, dict]:
    df, _ = make_panel(
        n_series=30, length=144, seed=0, trend=0.0, noise=0.0, future_effect=0.0, static=False, short_share=0.0, missing_share=0.0
    )
    return df[["unique_id", "ds", "y"]], dict(horizon=12, input_size=36, max_steps=600, freq="MS"), 3


def seasonal_defaults_panel() -> tuple[pd.DataFrame, dict]:
    df, _, n_points = seasonal_panel()
    return df, dict(horizon=12, freq="MS"), n_points


def tourism_panel():
    df, info = load_tourism("quarterly", "train")
    return df, dict(horizon=info.horizon, freq=info.freq), 2


def m3_panel():
    df, info = load_m3("monthly", "train")
    return df, dict(horizon=info.horizon, freq=info.freq), 3


PANELS = {"seasonal": seasonal_panel, "seasonal_defaults": seasonal_defaults_panel, "tourism": tourism_panel, "m3": m3_panel}


def seconds(call, repeats: int = 3) -> float:
    """The best of ``repeats`` timings of ``call()``."""
    best = float("inf")
    for _ in range(repeats):
        tick = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - tick)
    return best


def explain_cost(model, df: pd.DataFrame, n_series: int = 100) -> tuple[float, float]:
    """Seconds of ``predict`` and of ``explain`` of the first ``n_series`` series, each from a fresh pass."""
    part = df[df["unique_id"].isin(pd.unique(df["unique_id"])[:n_series])]

    def fresh(method):
        model._cache = None  # no reuse of an earlier pass on the same inputs
        return method(df=part)

    return seconds(lambda: fresh(model.predict)), seconds(lambda: fresh(model.explain))


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
    results = occlusions(model, df, n_points=n_points, max_series=None)
    maps, shares = results["weight"], results["contribution"]
    profile = attention_profile(model.explain(df=df), relative_to="target")
    mean = profile["mean"]
    peaks = list(mean.sort_values(ascending=False).index[:3])
    season = model.season_length_
    on_season = float(mean[[lag for lag in mean.index if lag % season == 0]].sum() / mean.sum())
    predict_s, explain_s = explain_cost(model, df)
    print(
        f"panel={args.panel} model={json.dumps(json.loads(args.model))} seed={args.seed} init={model.init_} "
        f"ratio={maps.ratio:.2f} share_ratio={shares.ratio:.2f} most={maps.most_attended:.4f} "
        f"least={maps.least_attended:.4f} series={maps.n_series} profile_peaks={peaks} "
        f"on_season_multiples={on_season:.3f} predict_100={predict_s:.3f}s explain_100={explain_s:.3f}s "
        f"seconds={time.perf_counter() - tick:.0f}"
    )


if __name__ == "__main__":
    main()
