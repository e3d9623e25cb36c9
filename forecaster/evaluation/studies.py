"""Backtest studies described by a TOML spec: which data, which model, which backtest."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import tomllib

from .. import datasets
from ..estimator import Seq2SeqForecaster
from .backtest import BacktestResult, backtest

LOADERS = {
    "m3": datasets.load_m3,
    "tourism": datasets.load_tourism,
    "electricity": datasets.load_electricity,
    "synthetic": datasets.make_panel,
}


def load_spec(path: str | Path) -> dict:
    """Read a study spec; errors name the missing table or key."""
    spec = tomllib.loads(Path(path).read_text())
    if "data" not in spec:
        raise ValueError(f"Study spec {str(path)!r} has no [data] table.")
    return spec


def load_study_data(data: dict, base: Path) -> tuple[pd.DataFrame, dict]:
    """The frame and the model defaults (freq, horizon, roles) that a [data] table names."""
    if "loader" in data:
        name = data["loader"]
        if name not in LOADERS:
            raise ValueError(f"[data] loader must be one of {tuple(LOADERS)}; got {name!r}.")
        df, info = LOADERS[name](**data.get("args", {}))
        defaults = {
            "horizon": info.horizon,
            "freq": info.freq,
            "season_length": info.season_length,
            "future_covariates": list(info.future_covariates),
            "past_covariates": list(info.past_covariates),
            "static_covariates": list(info.static_covariates),
        }
        return df, {"description": f"{info.name} ({info.source})", **defaults}
    if "path" not in data:
        raise ValueError("[data] needs `loader` (a built-in dataset) or `path` (a CSV or Parquet file).")
    path = (base / data["path"]).resolve()
    df = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    renames = {data.get("id_col", "unique_id"): "unique_id", data.get("time_col", "ds"): "ds", data.get("target_col", "y"): "y"}
    df = df.rename(columns=renames)
    if not pd.api.types.is_numeric_dtype(df["ds"]):  # numbers are refused by validation, never read as nanoseconds
        df["ds"] = pd.to_datetime(df["ds"])
    roles = {k: list(data.get(k, [])) for k in ("future_covariates", "past_covariates", "static_covariates")}
    return df, {"description": str(path.name), **roles, **{k: data[k] for k in ("freq", "horizon") if k in data}}


def run_study(path: str | Path, progress: bool = True) -> tuple[BacktestResult, dict]:
    """Run the backtest a spec describes; returns the result and the spec."""
    spec = load_spec(path)
    df, defaults = load_study_data(spec["data"], Path(path).parent)
    if "max_series" in spec["data"]:
        keep = pd.unique(df["unique_id"])[: int(spec["data"]["max_series"])]
        df = df[df["unique_id"].isin(keep)]
    description = defaults.pop("description")
    params = {**defaults, **spec.get("model", {}), "progress": progress}
    model = Seq2SeqForecaster(**params)
    settings = dict(spec.get("backtest", {}))
    if "baselines" in settings:
        settings["baselines"] = tuple(settings["baselines"])
    result = backtest(model, df, progress=progress, **settings)
    result.settings["data"] = description
    return result, spec
