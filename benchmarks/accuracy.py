"""Accuracy and cost of Seq2SeqForecaster against SeasonalNaive and AutoETS on public panels.

Two protocols:
  --protocol validation   3 rolling origins on the training part only (used to choose defaults)
  --protocol test         fit on the official training part, score once on the official test part

Prints MASE, sMAPE, wall time (fit + predict) and peak RSS. Run with OMP_WAIT_POLICY=PASSIVE:
  OMP_WAIT_POLICY=PASSIVE python benchmarks/accuracy.py --panel tourism_quarterly --protocol test
Model parameters can be overridden with --model '{"n_models": 3}'; --out FILE.csv also writes the table.
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

import pandas as pd

from forecaster import Seq2SeqForecaster, backtest
from forecaster.datasets import load_m3, load_tourism
from forecaster.evaluation.baselines import run_baselines
from forecaster.evaluation.metrics import (
    hit_rates,
    quantile_columns,
    score_forecasts,
    score_quantiles,
    seasonal_scales,
    weighted_quantile_loss,
)
from forecaster.evaluation.report_tables import calibration_by_fold
from forecaster.model.outputs import quantile_column

PANELS = {
    "m3_monthly": lambda split: load_m3("monthly", split),
    "tourism_quarterly": lambda split: load_tourism("quarterly", split),
}


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def official_test(panel: str, params: dict, nhits: bool) -> pd.DataFrame:
    train, info = PANELS[panel]("train")
    test, _ = PANELS[panel]("test")
    horizon, season = info.horizon, info.season_length
    rows, frames = [], []
    tick = time.perf_counter()
    model = Seq2SeqForecaster(horizon=horizon, freq=info.freq, **params).fit(train)
    forecast = model.predict()
    rows.append(("seq2seq", time.perf_counter() - tick, peak_rss_mb()))
    levels = [] if model.quantiles is None else sorted({float(q) for q in model.quantiles} | {0.5})
    renames = {"y_hat": "seq2seq", **{quantile_column(q): "seq2seq" + quantile_column(q)[5:] for q in levels if q != 0.5}}
    frames.append(forecast.rename(columns=renames)[["unique_id", "ds", *dict.fromkeys(renames.values())]])
    for name in ("seasonal_naive", "auto_ets"):
        tick = time.perf_counter()
        base = run_baselines(train, horizon, info.freq, season, (name,), level=None, quantiles=levels, n_jobs=1)
        rows.append((name, time.perf_counter() - tick, peak_rss_mb()))
        frames.append(base.drop(columns=[name + quantile_column(0.5)[5:]], errors="ignore"))
    if nhits:
        frames.append(_nhits(train, info, rows))
    merged = test[["unique_id", "ds", "y"]]
    for frame in frames:
        merged = merged.merge(frame, on=["unique_id", "ds"], how="left")
    cutoff = train["ds"].max()
    scales = seasonal_scales(train, season).reset_index().assign(cutoff=cutoff)
    models = [name for name, *_ in rows]
    metrics = score_forecasts(merged.assign(cutoff=cutoff), scales, models, {})
    table = metrics.groupby("model")[["mase", "smape"]].mean().loc[models]
    if len(levels) > 1:
        columns = {m: cols for m, cols in quantile_columns(models, levels).items() if set(cols.values()) <= set(merged)}
        scores = score_quantiles(merged.assign(cutoff=cutoff), columns)
        rates = hit_rates(scores)
        table = table.join(weighted_quantile_loss(scores))
        table["coverage_80"] = rates.get(0.9) - rates.get(0.1) if 0.1 in rates and 0.9 in rates else float("nan")
        with pd.option_context("display.width", 250, "display.float_format", "{:.3f}".format):
            print("hit rates (share of actuals at or below each quantile):")
            print(rates)
    timing = pd.DataFrame(rows, columns=["model", "seconds", "peak_rss_mb"]).set_index("model")
    return table.join(timing)


def _nhits(train: pd.DataFrame, info, rows: list) -> pd.DataFrame:
    """neuralforecast's NHITS with its defaults (input 2h, as in its documentation), and with its robust scaler.

    The defaults leave the series unscaled (``scaler_type="identity"``), which a panel of series on
    different scales punishes, so the robust scaler, an option its documentation recommends for
    such panels, is run as well. torch's default thread count (2 here) is left in place. Lightning's
    logs and progress bars are turned off, which changes nothing in the fit.
    """
    from neuralforecast import NeuralForecast
    from neuralforecast.models import NHITS

    merged = None
    quiet = {"logger": False, "enable_progress_bar": False}
    for name, extra in (("nhits", {}), ("nhits_robust", {"scaler_type": "robust"})):
        tick = time.perf_counter()
        nf = NeuralForecast(models=[NHITS(h=info.horizon, input_size=2 * info.horizon, **extra, **quiet)], freq=info.freq)
        nf.fit(df=train[["unique_id", "ds", "y"]])
        out = nf.predict()
        out = out.reset_index() if "unique_id" not in out.columns else out
        rows.append((name, time.perf_counter() - tick, peak_rss_mb()))
        out = out.rename(columns={"NHITS": name})[["unique_id", "ds", name]]
        merged = out if merged is None else merged.merge(out, on=["unique_id", "ds"])
    return merged


def validation(panel: str, params: dict, baselines: bool) -> pd.DataFrame:
    train, info = PANELS[panel]("train")
    model = Seq2SeqForecaster(horizon=info.horizon, freq=info.freq, **params)
    names = ("seasonal_naive", "auto_ets") if baselines else ()
    result = backtest(model, train, n_windows=3, n_jobs=1, baselines=names, progress=False)
    by_fold = result.metrics.groupby(["model", "cutoff"])["mase"].mean().unstack()
    with pd.option_context("display.float_format", "{:.3f}".format):
        print("mean MASE by fold (cutoff):")
        print(by_fold)
    summary = result.summary()
    with pd.option_context("display.width", 250, "display.float_format", "{:.3f}".format):
        print("hit rates (share of actuals at or below each quantile):")
        print(result.calibration())
        print("each fold on its own (one origin: a shock shared by every series moves all its hit rates):")
        print(calibration_by_fold(result.calibration(by="fold")).to_string(index=False))
    wanted = ["mean_mase", "median_mase", "mean_smape", "rel_mase_vs_auto_ets", "coverage", "wql"]
    wanted += ["fit_seconds", "predict_seconds"]
    return summary[[c for c in wanted if c in summary.columns]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--panel", choices=sorted(PANELS), required=True)
    parser.add_argument("--protocol", choices=("validation", "test"), default="validation")
    parser.add_argument("--model", default="{}", help="JSON of Seq2SeqForecaster parameters")
    parser.add_argument(
        "--nhits", action="store_true", help="test protocol: also run neuralforecast's NHITS (`pip install -e .[neural]`)"
    )
    parser.add_argument("--no-baselines", action="store_true", help="validation: score the model only")
    parser.add_argument("--out", help="also write the table to this CSV file")
    args = parser.parse_args()
    params = {"progress": False, **json.loads(args.model)}
    started = time.perf_counter()
    table = (
        official_test(args.panel, params, args.nhits)
        if args.protocol == "test"
        else validation(args.panel, params, not args.no_baselines)
    )
    with pd.option_context("display.width", 250, "display.max_columns", 20, "display.float_format", "{:.3f}".format):
        print(f"panel={args.panel} protocol={args.protocol} model={json.dumps(params)}")
        print(table)
    if args.protocol == "test":
        ratio = table.loc["seq2seq", "mase"] / table.loc["auto_ets", "mase"]
        cost = table.loc["seq2seq", "seconds"] / table.loc["auto_ets", "seconds"]
        print(f"MASE seq2seq / AutoETS = {ratio:.3f}; wall time seq2seq / AutoETS = {cost:.2f}")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        table.round(4).to_csv(args.out)
    print(f"total {time.perf_counter() - started:.0f} s, peak RSS {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
