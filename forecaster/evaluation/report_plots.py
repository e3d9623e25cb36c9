"""The plots of a backtest report that are not model plots: MASE by step, relative MASE, calibration."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..plots import literal
from .report_tables import COVERAGE_TOLERANCE, label


def mase_by_step(forecasts: pd.DataFrame, metrics: pd.DataFrame, models: list[str]) -> pd.DataFrame:
    """Mean scaled absolute error per horizon step and model (zero-scale series excluded)."""
    scales = metrics.drop_duplicates(["unique_id", "cutoff"])[["unique_id", "cutoff", "scale"]]
    frame = forecasts.merge(scales, on=["unique_id", "cutoff"], how="left")
    frame = frame[frame["scale"] > 0]
    step = frame.groupby(["unique_id", "cutoff"]).cumcount() + 1
    errors = {m: (frame[m] - frame["y"]).abs() / frame["scale"] for m in models}
    return pd.DataFrame(errors).assign(step=step.to_numpy()).groupby("step").mean()


def save(fig, folder: Path, name: str) -> str:
    fig.savefig(folder / name, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return name


def plot_mase_by_step(table: pd.DataFrame, folder: Path) -> str:
    fig, ax = plt.subplots(figsize=(8, 3.6))
    for model in table.columns:
        ax.plot(table.index, table[model], marker="o", ms=3, label=model)
    ax.set_xlabel("horizon step")
    ax.set_ylabel("mean scaled |error| (MASE)")
    ax.set_title("MASE by horizon step", loc="left")
    ax.grid(alpha=0.3)
    literal(ax.legend())
    return save(fig, folder, "mase_by_step.png")


def plot_calibration(rates: pd.DataFrame, folder: Path) -> str:
    """Each model's hit rate per quantile level against the level, with the calibrated diagonal and its tolerance band."""
    fig, ax = plt.subplots(figsize=(5.2, 4.4))
    levels = rates.columns.to_numpy(dtype=float)
    ax.fill_between(levels, levels - COVERAGE_TOLERANCE, levels + COVERAGE_TOLERANCE, color="0.9", label="calibrated +- 3 points")
    ax.plot([0, 1], [0, 1], color="0.5", lw=1, ls="--")
    for model, row in rates.iterrows():
        ax.plot(levels, row.to_numpy(dtype=float), marker="o", ms=4, label=label(str(model)))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("quantile level (nominal)")
    ax.set_ylabel("share of actuals at or below the quantile")
    ax.legend(fontsize=8, loc="upper left")
    return save(fig, folder, "calibration.png")


def plot_relative(metrics: pd.DataFrame, models: list[str], folder: Path) -> str | None:
    wide = metrics.pivot_table(index=["unique_id", "cutoff"], columns="model", values="mase")
    if "auto_ets" not in wide:
        return None
    fig, ax = plt.subplots(figsize=(8, 3.6))
    bins = np.linspace(-2, 2, 41)
    for model in [m for m in models if m != "auto_ets"]:
        ratio = np.log2((wide[model] / wide["auto_ets"]).replace([np.inf, 0], np.nan).dropna())
        ax.hist(ratio.clip(-2, 2), bins=bins, alpha=0.5, label=f"{model} (median ratio {2 ** ratio.median():.2f})")
    ax.axvline(0, color="k", lw=0.8)
    ax.set_xlabel("log2(MASE / AutoETS MASE) per series and fold (left of 0: better than AutoETS)")
    ax.set_ylabel("count")
    ax.set_title("Per-series MASE relative to AutoETS", loc="left")
    literal(ax.legend(fontsize=8))
    return save(fig, folder, "relative_mase.png")
