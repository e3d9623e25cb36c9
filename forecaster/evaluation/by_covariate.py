"""Errors and interval coverage split by the values of each future-known flag or code.

A pooled coverage of 80% can hold an interval too narrow on the days a planner cares most about: promotions,
holidays. This splits the scored points of a backtest by each value of each future-known covariate with a few values
(a flag or a code; a measurement such as a temperature is left out), and gives each value's points, the mean absolute
error of the model and of the reference baseline, and the share of actuals inside each one's outermost interval,
counted by coverage's own rule (``metrics.interval_shares``: an actual equal to quantiles counts a share).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .analysis import MODEL, reference_model
from .metrics import interval_shares

# Most values a covariate may take on the scored points to be split by them (a flag has two, a day type a few).
MAX_VALUES = 8
KEYS = ["unique_id", "ds"]


def _levels(frame: pd.DataFrame, model: str) -> dict[float, str]:
    """The model's forecast column per quantile level (its own column at the median)."""
    levels = {float(c.rsplit("_q", 1)[1]) / 100: c for c in frame.columns if c.startswith(f"{model}_q")}
    return {**levels, 0.5: model} if levels else {}


def _inside(frame: pd.DataFrame, y: np.ndarray, model: str) -> np.ndarray | None:
    """Each point's share inside the model's outermost interval; None without one."""
    levels = _levels(frame, model)
    if len(levels) < 3:
        return None
    return interval_shares(frame, y, (levels[min(levels)], levels[max(levels)]), levels)


def covariate_breakdown(result) -> pd.DataFrame:
    """One row per (future-known covariate, value) on the backtest's scored points: ``points``, each model's
    ``mae_<model>`` and ``coverage_<model>`` (the model and the reference baseline). Empty where the backtest kept
    no data or no future-known covariate takes between 2 and ``MAX_VALUES`` values there."""
    names = [
        n
        for n in (result.settings.get("model_params", {}).get("future_covariates") or ())
        if n in getattr(result.data, "columns", ())
    ]
    if not names:
        return pd.DataFrame()
    scored = result.forecasts[result.forecasts["y"].notna()]
    merged = scored.merge(result.data[[*KEYS, *names]].drop_duplicates(KEYS), on=KEYS, how="left")
    y = merged["y"].to_numpy(dtype=float)
    models = [m for m in (MODEL, reference_model(result.models)) if m is not None and m in merged]
    columns = {}
    for model in models:
        columns[f"mae_{model}"] = np.abs(y - merged[model].to_numpy(dtype=float))
        inside = _inside(merged, y, model)
        if inside is not None:
            columns[f"coverage_{model}"] = inside
    per_point = pd.DataFrame(columns)
    rows = []
    for name in names:  # a handful of covariates
        values = merged[name]
        if not (2 <= values.nunique() <= MAX_VALUES):
            continue
        grouped = per_point.groupby(values.to_numpy(), sort=True)
        table = grouped.mean().assign(points=grouped.size()).rename_axis("value").reset_index()
        rows.append(table.assign(covariate=name))
    if not rows:
        return pd.DataFrame()
    out = pd.concat(rows, ignore_index=True)
    return out[["covariate", "value", "points", *columns]]
