"""The validation suite: the judge of every default.

Scores the defaults, AutoETS and seasonal naive with rolling origins on fourteen panels, all cut from
training parts (no origin reads a test part):

- M3 yearly, quarterly, monthly and other; Tourism quarterly and yearly (official training parts);
- fpp3 ``aus_accommodation`` (8 states) and ``aus_arrivals`` (4 origins), quarterly, each whole panel with its
  last 8 quarters left unscored (kept for a final check, as a test part would be);
- fixed-seed draws of 20 and of 50 series from the training parts of M3 monthly, M3 quarterly and Tourism
  quarterly (the small-panel draws);
- and, in a group of their own, two panels driven by future-known covariates: the electricity study's daily
  demand with Temperature and WorkDay, and 30 synthetic monthly series whose promotions move sales by 40%
  (``make_panel``);
- and, in a group of their own ("short"), short histories: fixed-seed draws of 20 and of 50 series from the training
  parts of M3 yearly, M3 quarterly and Tourism quarterly, each cut to its last 30 + h rows, so that no origin reads
  more than 30 observations.

- a daily group ("daily"; the electricity study's daily series counts in it too): modeldata's Chicago rail
  ridership (20 stations; holidays and home games known ahead), mosaicData's US births (51 states; holidays), and
  300 synthetic daily retail series (promotions, holidays and opening days known ahead; closed days and intermittent
  series), scored against seasonal naive, AutoETS and MSTL (week and year);
- a high-frequency group ("high-frequency"): the electricity study half-hourly (temperature and working day known
  ahead, day-ahead), fpp3's 5-minute bank calls (opening hours known ahead), the forecast package's half-hourly
  `taylor` demand, and 200 synthetic hourly demand series (temperature and holidays known ahead), scored against
  seasonal naive and MSTL (day and week; AutoETS takes no season over 24 periods).

The geometric means "all" cover the fourteen panels above; the other groups have their own, with ratios to MSTL
(``*_vs_mstl``) where it ran. Per panel it
also prints the nine levels' hit rates (the share of actuals at or below each quantile, pooled over origins) and
writes them to the CSV (``hit_q10``, ..., ``hit_q90``).

Each panel gets 3 origins, ``ceil(h / 2)`` periods apart, the last one ``h`` before the end of its part.
Per panel it prints MASE, WQL (9 levels), 80% coverage (pooled over origins) and fit + predict seconds of each
model, each as a ratio to AutoETS, and the occlusion ratios of the last fold's maps and shares (their medians go
with the means), then the geometric means of the ratios over the suite and over its groups (small: the draws and
fpp3; large: the whole training parts). AutoETS runs once on a short panel before any
timing, so no one-off compilation is counted; every model runs in this one process, one thread each.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/suite.py                        # the whole suite
    OMP_WAIT_POLICY=PASSIVE python benchmarks/suite.py --panels small         # draws and fpp3 only
    OMP_WAIT_POLICY=PASSIVE python benchmarks/suite.py --panels covariates    # the two covariate-driven panels
    OMP_WAIT_POLICY=PASSIVE python benchmarks/suite.py --panels short         # the short-history draws
    OMP_WAIT_POLICY=PASSIVE python benchmarks/suite.py --panels daily electricity_daily high-frequency
    OMP_WAIT_POLICY=PASSIVE python benchmarks/suite.py --model '{"init": "pretrained"}' --label prior
    OMP_WAIT_POLICY=PASSIVE python benchmarks/suite.py --treatment network --label "network quantiles"
    OMP_WAIT_POLICY=PASSIVE python benchmarks/suite.py --panels tourism_quarterly --irrelevant-flag --label flag

``--out`` (default ``benchmarks/results/suite.csv``) gets one row per panel and model; rows of another
``--label`` already in the file are kept, so variants can be compared in one table.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from forecaster import Seq2SeqForecaster, backtest
from forecaster.datasets import (
    load_bank_calls,
    load_birthdays,
    load_chicago,
    load_electricity,
    load_fpp3,
    load_m3,
    load_taylor,
    load_tourism,
    make_daily_retail,
    make_hourly_demand,
    make_panel,
)
from forecaster.model import calibration
from forecaster.model.calibration import TREATMENTS

N_ORIGINS = 3
DRAW_SEED = 2026
MODEL = "seq2seq"
BASELINES = ("seasonal_naive", "auto_ets")
# The baselines of each group where they differ: daily and high-frequency users compare with MSTL (the week and the
# year, the day and the week), and AutoETS takes no season longer than 24 periods.
GROUP_BASELINES = {"daily": (*BASELINES, "mstl"), "high-frequency": ("seasonal_naive", "mstl")}
GROUPS = ("small", "large", "short", "covariates", "daily", "high-frequency")
# Panels in two groups' means: the electricity study's daily series is a covariate panel and a daily one.
ALSO_IN = {"electricity_daily": "daily"}
OUT = Path(__file__).parent / "results" / "suite.csv"


def _draw(frame: pd.DataFrame, n: int, seed: int = DRAW_SEED) -> pd.DataFrame:
    """``n`` series drawn at random (a fixed seed) from a panel."""
    ids = np.sort(frame["unique_id"].unique())
    chosen = np.random.default_rng(seed).choice(ids, size=n, replace=False)
    return frame[frame["unique_id"].isin(chosen)].reset_index(drop=True)


def _without_last(frame: pd.DataFrame, periods: int) -> pd.DataFrame:
    """Each series without its last ``periods`` rows: kept unscored, as a test part would be."""
    rank = frame.groupby("unique_id").cumcount(ascending=False)
    return frame[rank >= periods].reset_index(drop=True)


# A panel as the suite scores it: the frame, horizon, season length, frequency and future-known covariates.
Loaded = tuple[pd.DataFrame, int, int, str, tuple[str, ...]]


def _m3(group: str, n: int | None = None) -> Callable[[], Loaded]:
    def load() -> Loaded:
        df, info = load_m3(group, "train")
        return (df if n is None else _draw(df, n)), info.horizon, info.season_length, info.freq, ()

    return load


def _tourism(group: str, n: int | None = None) -> Callable[[], Loaded]:
    def load() -> Loaded:
        df, info = load_tourism(group, "train")
        return (df if n is None else _draw(df, n)), info.horizon, info.season_length, info.freq, ()

    return load


# The short-history group: series with at most this many observations at each origin.
SHORT_HISTORY = 30


def _short(source: str, group: str, n: int, seed: int = DRAW_SEED + 1) -> Callable[[], Loaded]:
    """``n`` series drawn (a fixed seed) from a training part, each cut to its last ``SHORT_HISTORY + h`` rows, so
    that every origin reads at most ``SHORT_HISTORY`` observations (the last one exactly that many where a series is
    long enough; the earlier ones fewer)."""

    def load() -> Loaded:
        df, info = (load_m3 if source == "m3" else load_tourism)(group, "train")
        drawn = _draw(df, n, seed)
        rank = drawn.groupby("unique_id").cumcount(ascending=False)
        return drawn[rank < SHORT_HISTORY + info.horizon].reset_index(drop=True), info.horizon, info.season_length, info.freq, ()

    return load


def _fpp3(item: str) -> Callable[[], Loaded]:
    def load() -> Loaded:
        df, info = load_fpp3(item)
        return _without_last(df, info.horizon), info.horizon, info.season_length, info.freq, ()

    return load


def _electricity() -> Loaded:
    """Victoria's daily electricity demand in 2014 with Temperature and WorkDay known ahead (the electricity study)."""
    df, info = load_electricity("daily")
    return df, info.horizon, info.season_length, info.freq, tuple(info.future_covariates)


def _promotions() -> Loaded:
    """30 synthetic monthly series whose promotions (known ahead) move sales by 40%, with 10% noise."""
    df, info = make_panel(n_series=30, length=96, seed=11, future_effect=0.4, noise=0.1)
    return df[["unique_id", "ds", "y", "promo"]], 12, 12, "MS", ("promo",)


def _loaded(loader: Callable[[], tuple[pd.DataFrame, object]]) -> Callable[[], Loaded]:
    """A dataset loader as the suite scores it: its frame with the target and its future-known covariates."""

    def load() -> Loaded:
        df, info = loader()
        future = tuple(info.future_covariates)
        return df[["unique_id", "ds", "y", *future]], info.horizon, info.season_length, info.freq, future

    return load


# Panel -> (group, loader). Small: the draws and fpp3; large: whole training parts; covariates: panels whose
# future-known covariates drive the target (their own group, so the other groups' means stay comparable).
PANELS: dict[str, tuple[str, Callable[[], Loaded]]] = {
    "m3_monthly_draw20": ("small", _m3("monthly", 20)),
    "m3_monthly_draw50": ("small", _m3("monthly", 50)),
    "m3_quarterly_draw20": ("small", _m3("quarterly", 20)),
    "m3_quarterly_draw50": ("small", _m3("quarterly", 50)),
    "tourism_quarterly_draw20": ("small", _tourism("quarterly", 20)),
    "tourism_quarterly_draw50": ("small", _tourism("quarterly", 50)),
    "fpp3_aus_accommodation": ("small", _fpp3("aus_accommodation")),
    "fpp3_aus_arrivals": ("small", _fpp3("aus_arrivals")),
    "m3_yearly": ("large", _m3("yearly")),
    "m3_quarterly": ("large", _m3("quarterly")),
    "m3_monthly": ("large", _m3("monthly")),
    "m3_other": ("large", _m3("other")),
    "tourism_quarterly": ("large", _tourism("quarterly")),
    "tourism_yearly": ("large", _tourism("yearly")),
    "short_m3_yearly_draw20": ("short", _short("m3", "yearly", 20)),
    "short_m3_yearly_draw50": ("short", _short("m3", "yearly", 50)),
    "short_m3_quarterly_draw20": ("short", _short("m3", "quarterly", 20)),
    "short_m3_quarterly_draw50": ("short", _short("m3", "quarterly", 50)),
    "short_tourism_quarterly_draw20": ("short", _short("tourism", "quarterly", 20)),
    "short_tourism_quarterly_draw50": ("short", _short("tourism", "quarterly", 50)),
    "chicago_daily": ("daily", _loaded(load_chicago)),
    "birthdays_daily": ("daily", _loaded(load_birthdays)),
    "retail_daily_synthetic": ("daily", _loaded(make_daily_retail)),
    "electricity_halfhourly": ("high-frequency", _loaded(lambda: load_electricity("half-hourly"))),
    "bank_calls_5min": ("high-frequency", _loaded(load_bank_calls)),
    "taylor_halfhourly": ("high-frequency", _loaded(load_taylor)),
    "demand_hourly_synthetic": ("high-frequency", _loaded(make_hourly_demand)),
    "electricity_daily": ("covariates", _electricity),
    "promotions_synthetic": ("covariates", _promotions),
}


def warm_up_baselines() -> None:
    """Run AutoETS and seasonal naive once on a short panel, so that no compilation is timed."""
    from forecaster.evaluation.baselines import run_baselines

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"unique_id": "a", "ds": pd.date_range("2000-01-01", periods=40, freq="QS"), "y": 10 + rng.normal(size=40)})
    run_baselines(df, 4, "QS", 4, BASELINES, level=None, quantiles=(0.1, 0.5, 0.9))


def selected(wanted: list[str]) -> list[str]:
    """Panel names from names, groups or "all" (unknown names kept, for the caller to refuse)."""
    return [p for w in wanted for p in (PANELS if w == "all" else [n for n, (g, _) in PANELS.items() if g == w] or [w])]


def score_panel(name: str, params: dict, irrelevant_flag: bool = False) -> pd.DataFrame:
    """One panel's rows: MASE, WQL, 80% coverage and seconds of the model and the baselines.

    ``irrelevant_flag``: declare a random 0/1 column (seed 0), which carries nothing, as a future-known covariate.
    """
    group, load = PANELS[name]
    df, horizon, season, freq, future = load()
    if irrelevant_flag:
        df = df.assign(flag=np.random.default_rng(0).integers(0, 2, len(df)).astype(float))
        future = (*future, "flag")
    roles = {"future_covariates": list(future)} if future else {}
    model = Seq2SeqForecaster(horizon=horizon, freq=freq, season_length=season, progress=False, num_threads=1, **roles, **params)
    baselines = GROUP_BASELINES.get(group) or GROUP_BASELINES.get(ALSO_IN.get(name, ""), BASELINES)
    result = backtest(model, df, n_windows=N_ORIGINS, step_size=math.ceil(horizon / 2), baselines=baselines, progress=False)
    summary = result.summary()
    rates = result.calibration()  # model x level: the share of actuals at or below each quantile, pooled over origins
    check = result.settings.get("occlusion") or {}
    rows = []
    for model_name in (MODEL, *baselines):
        row = summary.loc[model_name]
        own = model_name == MODEL  # the occlusion check of the last fold's maps and shares (50 series at most)
        rows.append(
            {
                "panel": name,
                "group": group,
                "n_series": int(df["unique_id"].nunique()),
                "horizon": horizon,
                "model": model_name,
                "mase": float(row["mean_mase"]),
                "wql": float(row["wql"]),
                "coverage_80": float(row["coverage"]),
                "seconds": float(row["fit_seconds"] + row["predict_seconds"]),
                "n_scored": int(row["n_scored"]),
                "occlusion_ratio": float(check.get("ratio", np.nan)) if own else np.nan,
                "share_occlusion_ratio": float(check.get("share_ratio", np.nan)) if own else np.nan,
                **{hit_column(q): float(rates.loc[model_name, q]) if model_name in rates.index else np.nan for q in rates},
            }
        )
    return pd.DataFrame(rows)


def hit_column(level: float) -> str:
    """The suite's column of a level's hit rate: ``hit_q10`` for 0.1 (the share of actuals at or below it)."""
    return f"hit_q{round(float(level) * 100):02d}"


def ratios(table: pd.DataFrame) -> pd.DataFrame:
    """Each model's MASE, WQL and seconds as ratios to AutoETS on the same panel (and label), and to MSTL
    (``*_vs_mstl``) where it ran (the daily and high-frequency groups; the latter have no AutoETS)."""
    keys = [c for c in ("label", "panel") if c in table]
    out = table
    for reference, suffix in (("auto_ets", "_ratio"), ("mstl", "_vs_mstl")):
        rows = table[table["model"] == reference].set_index(keys)[["mase", "wql", "seconds"]]
        out = out.join(rows, on=keys, rsuffix="_reference")
        for metric in ("mase", "wql", "seconds"):
            out[f"{metric}{suffix}"] = out[metric] / out[f"{metric}_reference"]
        out = out.drop(columns=[f"{m}_reference" for m in ("mase", "wql", "seconds")])
    return out


def geometric_means(table: pd.DataFrame) -> pd.DataFrame:
    """Geometric means of the ratios to AutoETS (and the mean coverage) per model, over all panels and per group."""
    scored = ratios(table)
    parts = []
    suite = scored[scored["group"].isin(["small", "large"])]  # "all": the fourteen panels every label has
    also = scored[scored["panel"].isin(list(ALSO_IN))].assign(group=lambda t: t["panel"].map(ALSO_IN))
    groups = pd.concat([scored, also], ignore_index=True).groupby("group")
    geometric = lambda v: float(np.exp(np.log(v.dropna()).mean())) if v.notna().any() else np.nan  # noqa: E731
    for group, rows in [("all", suite), *groups]:
        agg = rows.groupby("model").agg(
            mase_ratio=("mase_ratio", geometric),
            wql_ratio=("wql_ratio", geometric),
            seconds_ratio=("seconds_ratio", geometric),
            mase_vs_mstl=("mase_vs_mstl", geometric),
            wql_vs_mstl=("wql_vs_mstl", geometric),
            seconds_vs_mstl=("seconds_vs_mstl", geometric),
            coverage_80=("coverage_80", "mean"),
            **({"occlusion_median": ("occlusion_ratio", "median")} if "occlusion_ratio" in rows else {}),
            **({"share_occlusion_median": ("share_occlusion_ratio", "median")} if "share_occlusion_ratio" in rows else {}),
            panels=("panel", "nunique"),
        )
        parts.append(agg.assign(group=group).reset_index())
    return pd.concat(parts, ignore_index=True).set_index(["group", "model"]).dropna(axis=1, how="all")


def print_summary(table: pd.DataFrame) -> None:
    """Per label: the geometric means of the ratios to AutoETS, and the per-panel ratios of the model."""
    pd.set_option("display.width", 200)
    for label, rows in table.groupby("label", sort=False):
        print(f"\n== {label}: geometric means of the ratios to AutoETS (coverage: mean over panels)")
        print(geometric_means(rows).round(4).to_string())
    model = ratios(table)[lambda t: t["model"] == MODEL]
    wide = model.pivot_table(index="panel", columns="label", values=["mase_ratio", "wql_ratio", "seconds_ratio", "coverage_80"])
    print("\n== seq2seq per panel, each label")
    print(wide.round(3).to_string())


def write_atomically(frame: pd.DataFrame, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".csv.partial")
    frame.to_csv(partial, index=False, float_format="%.6g")
    os.replace(partial, path)


def main_against_seasonal_naive(label: str) -> None:
    """``main`` with seasonal naive the only baseline, and ``label`` unless ``--label`` is given: for the scripts that
    patch a lever into the package (the other baselines are deterministic: their rows of another label serve)."""
    global BASELINES, GROUP_BASELINES
    BASELINES = ("seasonal_naive",)
    GROUP_BASELINES = dict.fromkeys(GROUPS, BASELINES)
    if "--label" not in sys.argv:
        sys.argv += ["--label", label]
    main()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--panels",
        nargs="*",
        default=["all"],
        help=f"panel names, or the groups {', '.join(GROUPS)}, 'all'",
    )
    parser.add_argument("--model", default="{}", help="JSON of Seq2SeqForecaster parameters (default: the defaults)")
    parser.add_argument("--label", default="defaults", help="name of this variant in the CSV")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--summary", action="store_true", help="print the geometric means of every label in --out; run nothing")
    parser.add_argument(
        "--treatment",
        choices=TREATMENTS,
        help="force this interval treatment in every fit instead of the per-fit choice (a measurement of what the choice gains)",
    )
    parser.add_argument(
        "--irrelevant-flag", action="store_true", help="declare a random 0/1 column as a future-known covariate in every panel"
    )
    args = parser.parse_args()
    if args.summary:
        print_summary(pd.read_csv(args.out))
        return
    names = selected(args.panels)
    unknown = [n for n in names if n not in PANELS]
    if unknown:
        parser.error(
            f"unknown panels {unknown}; choose from {list(PANELS)} or small, large, short, covariates, daily, high-frequency, all"
        )
    params = json.loads(args.model)
    if args.treatment:  # every fit's calibration takes this treatment, whatever its held-out windows say

        def forced(blended, mixed, *_, **__):  # a mixed treatment only where a partner's distribution can be mixed in
            return (args.treatment if mixed is not None or not args.treatment.startswith("mixed") else "network"), {}

        calibration.choose_treatment = forced
    warnings.filterwarnings("ignore", category=UserWarning)
    warm_up_baselines()
    tables = []
    pd.set_option("display.width", 200)
    for name in dict.fromkeys(names):
        tick = time.perf_counter()
        table = score_panel(name, params, args.irrelevant_flag).assign(label=args.label)
        tables.append(table)
        shown = (
            ratios(table)
            .set_index("model")[
                ["mase", "wql", "coverage_80", "seconds", "mase_ratio", "wql_ratio", "seconds_ratio", "mase_vs_mstl"]
            ]
            .dropna(axis=1, how="all")
        )
        print(
            f"\n== {name} ({table['n_series'].iloc[0]} series, h={table['horizon'].iloc[0]}; {time.perf_counter() - tick:.0f} s)"
        )
        print(shown.round(4).to_string())
        hits = table.set_index("model")[[c for c in table.columns if c.startswith("hit_q")]]
        print("hit rates (share of actuals at or below each quantile, pooled over origins):")
        print(hits.round(3).to_string())
        done = pd.concat(tables, ignore_index=True)
        kept = pd.read_csv(args.out) if args.out.exists() else pd.DataFrame()
        if len(kept):
            kept = kept[~((kept["label"] == args.label) & kept["panel"].isin(done["panel"]))]
        write_atomically(pd.concat([kept, done], ignore_index=True), args.out)
    print("\n== geometric means of the ratios to AutoETS (coverage: mean over panels)")
    print(geometric_means(pd.concat(tables, ignore_index=True)).round(4).to_string())


if __name__ == "__main__":
    main()
