"""Does the step budget that grows with the panel buy accuracy on a large panel? Against AutoETS on a sample.

  OMP_WAIT_POLICY=PASSIVE python benchmarks/training_budget.py [--series 100000] [--steps 1500] [--sample 2000]

A synthetic monthly panel of ``--series`` series of 120 months with known structure (``make_panel``: level,
trend, a yearly pattern, noise; no covariates, gaps or short series). The last 12 months of every series are held out; the model
is fitted on all series' training parts with ``--steps`` training steps (omit it for the default budget,
which grows past 250,000 windows: ``default_max_steps``), then forecasts a fixed random sample of
``--sample`` series, which AutoETS (statsforecast) and seasonal naive forecast too. Prints the steps, the fit
time, and the mean MASE of each model on the sample (scale: the in-sample seasonal-naive error of each
series' training part), with the ratio to AutoETS. Run one budget per process to compare them.
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import pandas as pd

HORIZON = 12
SEASON = 12


def split(n_series: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    from forecaster.datasets import make_panel

    df, _ = make_panel(n_series=n_series, length=120, seed=0, static=False, short_share=0.0, missing_share=0.0)
    df = df[["unique_id", "ds", "y"]]
    last = df.groupby("unique_id")["ds"].transform("max")
    cut = last - pd.DateOffset(months=HORIZON)
    return df[df["ds"] <= cut], df[df["ds"] > cut]


def mase(forecast: pd.DataFrame, column: str, test: pd.DataFrame, train: pd.DataFrame) -> float:
    from utilsforecast.losses import mase as mase_loss

    scored = forecast[["unique_id", "ds", column]].merge(test, on=["unique_id", "ds"])
    return float(mase_loss(scored, [column], seasonality=SEASON, train_df=train)[column].mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--series", type=int, default=100_000)
    parser.add_argument("--steps", type=int, default=None, help="training steps (default: the default budget)")
    parser.add_argument("--sample", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from statsforecast import StatsForecast
    from statsforecast.models import AutoETS, SeasonalNaive

    from forecaster import Seq2SeqForecaster

    train, test = split(args.series)
    model = Seq2SeqForecaster(horizon=HORIZON, freq="MS", max_steps=args.steps, random_state=args.seed, progress=False)
    tick = time.perf_counter()
    model.fit(train)
    fit_seconds = time.perf_counter() - tick
    steps = len(model.train_result_.train_loss)

    ids = np.random.default_rng(1).choice(train["unique_id"].unique(), size=min(args.sample, args.series), replace=False)
    sample_train = train[train["unique_id"].isin(ids)]
    sample_test = test[test["unique_id"].isin(ids)]
    ours = model.predict(df=sample_train)
    tick = time.perf_counter()
    stats = StatsForecast(models=[AutoETS(season_length=SEASON), SeasonalNaive(season_length=SEASON)], freq="MS", n_jobs=1)
    theirs = stats.forecast(df=sample_train, h=HORIZON)
    ets_seconds = time.perf_counter() - tick
    scores = {
        "seq2seq": mase(ours, "y_hat", sample_test, sample_train),
        "AutoETS": mase(theirs, "AutoETS", sample_test, sample_train),
        "SeasonalNaive": mase(theirs, "SeasonalNaive", sample_test, sample_train),
    }
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(
        f"series={args.series} steps={steps} ({'default' if args.steps is None else 'given'}) fit={fit_seconds:.0f}s "
        f"peak_rss={peak:.0f}MB sample={len(ids)} AutoETS_seconds={ets_seconds:.0f}"
    )
    for name, value in scores.items():
        print(f"  {name:14s} MASE {value:.4f}  ({value / scores['AutoETS']:.3f}x AutoETS)")


if __name__ == "__main__":
    main()
