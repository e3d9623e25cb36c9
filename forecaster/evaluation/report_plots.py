"""The plots of a backtest report that are not model plots: the forecasts overview, MASE by step, per-series and
relative MASE, calibration."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..plots import literal, readable
from ..plots.forecast import calendar_ticks, isolated
from .analysis import MODEL, better_and_worse, mase_by_step, paired_with, relative_mase
from .report_tables import COVERAGE_TOLERANCE, label

# The MASE per step is computed in ``analysis``; it stays importable from here.
__all__ = ["mase_by_step", "plot_calibration", "plot_mase_by_step", "plot_overview", "plot_per_series", "plot_relative", "save"]


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
    fig, ax = plt.subplots(figsize=(6, 3.6))
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
    """Per series and fold, each model's MASE over AutoETS's on a log2 scale, as histograms; None without AutoETS."""
    ratios = relative_mase(metrics, models, "auto_ets")
    if ratios is None:
        return None
    fig, ax = plt.subplots(figsize=(8, 3.6))
    bins = np.linspace(-2, 2, 41)
    beyond = 0
    for model, ratio in ratios.items():
        beyond += int((ratio.abs() > 2).sum())
        ax.hist(ratio.clip(-2, 2), bins=bins, alpha=0.5, label=f"{model} (median ratio {2 ** ratio.median():.2f})")
    ax.axvline(0, color="k", lw=0.8)
    ax.set_xlabel("log2(MASE / AutoETS MASE) per series and fold (left of 0: better than AutoETS)")
    ax.set_ylabel("count")
    counted = f" ({beyond} beyond 4x either way, in the end bins)" if beyond else ""
    ax.set_title(f"Per-series MASE relative to AutoETS{counted}", loc="left")
    literal(ax.legend(fontsize=8))
    return save(fig, folder, "relative_mase.png")


def plot_overview(forecasts: pd.DataFrame, data: pd.DataFrame, picks: dict, folds: dict, target: str, folder: Path) -> str:
    """The report's first figure: the picked series' forecasts (median and outermost interval) against their actuals,
    side by side, each on the fold it was picked for (``folds``: name -> (cutoff, MASE)); ``data`` in ``unique_id``,
    ``ds``, ``y``. Each panel shows two horizons of history, so its y-axis is scaled to what it shows."""
    names = [n for n in picks if n in folds]
    fig, axes = plt.subplots(1, len(names), figsize=(3.9 * len(names) + 0.6, 2.9), squeeze=False, layout="constrained")
    quantiles = sorted((c for c in forecasts.columns if c.startswith(f"{MODEL}_q")), key=lambda c: float(c.rsplit("_q", 1)[1]))
    for ax, name in zip(axes[0], names, strict=True):
        uid, (cutoff, mase) = picks[name], folds[name]
        fc = forecasts[(forecasts["unique_id"] == uid) & (forecasts["cutoff"] == cutoff)].sort_values("ds")
        series = data[data["unique_id"] == uid].sort_values("ds")
        past = series[series["ds"] <= cutoff].tail(2 * len(fc))
        ax.plot(past["ds"], past["y"], color="0.2", lw=1.1, label="history")
        alone = isolated(past["y"])  # between gaps a line draws nothing
        if alone.any():
            ax.plot(past["ds"][alone], past["y"][alone], color="0.2", ls="none", marker=".", ms=3)
        ax.plot(fc["ds"], fc["y"], color="0.2", lw=1.1, ls="--", marker=".", ms=3, label="actual")
        if len(quantiles) >= 2:
            low, high = quantiles[0], quantiles[-1]
            band = f"{low.rsplit('_', 1)[-1]}-{high.rsplit('_', 1)[-1]} interval"
            ax.fill_between(fc["ds"], fc[low], fc[high], color="C0", alpha=0.2, label=band)
        ax.plot(fc["ds"], fc[MODEL], color="C0", lw=1.6, label="seq2seq forecast")
        literal(ax.set_title(f"{name}: {uid}", loc="left", fontsize=9))
        ax.text(0.01, 0.97, f"MASE {readable(mase)} on this fold", transform=ax.transAxes, va="top", fontsize=7, color="0.3")
        ax.tick_params(labelsize=7)
        calendar_ticks(ax, 5)  # on the calendar: 1996-04, not 1996-04-14
        ax.grid(alpha=0.3)
    literal(axes[0, 0].set_ylabel(target, fontsize=8))
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels), fontsize=8, frameon=False)
    return save(fig, folder, "forecast_overview.png")


def plot_per_series(metrics: pd.DataFrame, baselines: list[str], folder: Path) -> str | None:
    """Per series, seq2seq's mean MASE against each baseline's (over the folds both scored): below the diagonal,
    seq2seq forecast that series better. Axes end at the 98th percentile: points beyond it sit on the edge, as red
    triangles counted in the title."""
    pairs = paired_with(metrics, baselines)
    if not pairs:
        return None
    fig, axes = plt.subplots(1, len(pairs), figsize=(4.6 * len(pairs) + 0.4, 3.3), squeeze=False, layout="constrained")
    for ax, (baseline, table) in zip(axes[0], pairs, strict=True):
        x, y = table[f"{baseline}_mase"].to_numpy(float), table[f"{MODEL}_mase"].to_numpy(float)
        top = float(np.nanquantile(np.concatenate([x, y]), 0.98)) * 1.05 or 1.0
        better = better_and_worse(table)[0]
        edge = (x > top) | (y > top)  # drawn on the edge, as triangles, and counted in the title
        ax.scatter(x[~edge], y[~edge], s=12, color="C0", alpha=0.7)
        ax.scatter(np.minimum(x[edge], top), np.minimum(y[edge], top), s=24, color="C3", marker="^", clip_on=False)
        ax.plot([0, top], [0, top], color="0.5", lw=0.8, ls="--")
        ax.set_xlim(0, top)
        ax.set_ylim(0, top)
        ax.set_xlabel(f"{label(baseline)} MASE", fontsize=8)
        ax.set_ylabel("seq2seq MASE", fontsize=8)
        off = f"; {int(edge.sum())} beyond the axes (on the edge)" if edge.any() else ""
        ax.set_title(f"vs {label(baseline)}: seq2seq better on {better} of {len(table)}{off}", loc="left", fontsize=9)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    return save(fig, folder, "mase_per_series.png")
