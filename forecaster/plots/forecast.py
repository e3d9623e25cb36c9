"""The forecast plot: history, forecast, interval, baselines and actuals, one panel per series."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..data.frames import shown_id
from ..model.outputs import BASELINES
from .text import literal


def point_and_band(forecasts: pd.DataFrame, model: str | None) -> tuple[str, str | None, str | None]:
    """The point column (``model``, else ``y_hat`` or ``seq2seq``) and the band's outermost quantiles or bounds, if any."""
    point = model or ("y_hat" if "y_hat" in forecasts.columns else "seq2seq")
    quantile_cols = sorted(
        (c for c in forecasts.columns if c.startswith(f"{point}_q")), key=lambda c: float(c.rsplit("_q", 1)[1])
    )
    if len(quantile_cols) >= 2:
        return point, quantile_cols[0], quantile_cols[-1]
    if f"{point}_lo" in forecasts.columns:
        return point, f"{point}_lo", f"{point}_hi"
    return point, None, None


def isolated(values: pd.Series) -> np.ndarray:
    """Where ``values`` (in time order) holds an observation whose neighbours are both missing: a line drawn through
    the values leaves it out."""
    present = values.notna().to_numpy()
    before = np.concatenate([[False], present[:-1]])
    after = np.concatenate([present[1:], [False]])
    return present & ~before & ~after


def on_grid(frame: pd.DataFrame, times: pd.Series, time_col: str, target_col: str) -> pd.DataFrame:
    """``frame`` (time and target, in time order) with a missing target on every period absent from it, on the grid
    of ``times`` (the forecast's consecutive periods, whose spacing pandas names): a line drawn through it breaks at
    absent rows as at missing targets. As it is where the grid cannot be read (fewer than three forecast periods,
    times that are not dates, rows off the grid)."""
    if len(times) < 3 or len(frame) < 2 or not pd.api.types.is_datetime64_any_dtype(times):
        return frame
    freq = pd.infer_freq(pd.DatetimeIndex(times.sort_values()))
    stamps = pd.DatetimeIndex(frame[time_col])
    if freq is None or stamps.has_duplicates:
        return frame
    if freq == "D" and not stamps.dayofweek.isin([5, 6]).any():  # a short horizon of business days reads as daily
        freq = "B"
    grid = pd.date_range(stamps[0], stamps[-1], freq=freq)
    if len(grid) == len(stamps) or not stamps.isin(grid).all():
        return frame
    values = frame[target_col].to_numpy(dtype=float)
    filled = pd.Series(np.nan, index=grid)
    filled[stamps] = values
    return pd.DataFrame({time_col: grid, target_col: filled.to_numpy()})


def draw_forecast(ax, history, forecast, actual, point, lo, hi, time_col, target_col, baselines=()) -> None:
    """History (solid), actuals (dashed), forecast with its band and baselines (thin dashed); any part may be None.
    Periods absent from the history break its line, as missing targets do (``on_grid``)."""
    if history is not None and forecast is not None:
        history = on_grid(history, forecast[time_col], time_col, target_col)
    if history is not None:
        ax.plot(history[time_col], history[target_col], color="0.2", lw=1.2, label="history")
        alone = isolated(history[target_col])  # a line needs two neighbours: an observation between gaps draws nothing
        if alone.any():
            ax.plot(history[time_col][alone], history[target_col][alone], color="0.2", ls="none", marker=".", ms=4)
    if actual is not None:  # rows past the last observed actual draw nothing (a gap inside stays a break in the line)
        observed = actual[target_col].notna().to_numpy()
        actual = actual.iloc[: int(np.flatnonzero(observed)[-1]) + 1 if observed.any() else 0]
    if actual is not None and len(actual):
        ax.plot(actual[time_col], actual[target_col], color="0.2", lw=1.2, ls="--", marker=".", ms=4, label="actual")
    if forecast is None:
        return
    ax.plot(forecast[time_col], forecast[point], color="C0", lw=1.6, label="forecast")
    for i, name in enumerate(baselines):
        ax.plot(forecast[time_col], forecast[name], color=f"C{i + 1}", lw=0.9, ls="--", label=name)
    if lo is not None:
        low, high = forecast[lo].to_numpy(), forecast[hi].to_numpy()
        label = f"{lo.rsplit('_', 1)[-1]}-{hi.rsplit('_', 1)[-1]} interval"
        ax.fill_between(forecast[time_col], low, high, color="C0", alpha=0.2, label=label)


def legend_outside(ax, panels=None) -> None:
    """One legend of every labelled artist of ``panels`` (default ``ax``), beside ``ax`` on its right, off the data."""
    entries: dict = {}
    for panel in [ax] if panels is None else panels:
        for handle, label in zip(*panel.get_legend_handles_labels(), strict=True):
            entries.setdefault(label, handle)
    if entries:  # an explain frame alone draws no history or forecast
        literal(ax.legend(list(entries.values()), list(entries), loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8))


def calendar_ticks(ax, maxticks: int, zone=None) -> None:
    """Date ticks that fit the axis ("Jul", "15", "1996"), not full timestamps that run together on daily data;
    ``zone``: the data's time zone, in which the dates are read."""
    locator = mdates.AutoDateLocator(minticks=3, maxticks=maxticks, tz=zone)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator, tz=zone))


def plot_forecast(
    forecasts: pd.DataFrame,
    df: pd.DataFrame,
    unique_ids: list | None = None,
    model: str | None = None,
    history: int | None = None,
    max_series: int = 6,
    id_col: str = "unique_id",
    time_col: str = "ds",
    target_col: str = "y",
    *,
    baselines: Sequence[str] | None = None,
    title: str | Mapping | None = None,
    ylabel: str | None = None,
) -> Figure:
    """History, forecast, interval, baselines and (when ``df`` holds them) actuals, one panel per series.

    Args:
        forecasts: ``predict``'s (``y_hat``, ``y_hat_q..``) or a backtest's (``model`` picks the column;
            the last cutoff of each series is drawn).
        df: the history (and possibly the actuals after the forecast origin).
        history: periods of history to show; default four horizons.
        baselines: forecast columns drawn as thin dashed lines; None: those of ``BASELINES``
            (``seasonal_naive``, ``auto_ets``) that ``forecasts`` has, bar ``model``; ``()``: none.
        title: each panel's title (a string, or a mapping from series id); default the series id.
        ylabel: the y-axis label; default ``target_col``.

    The legend (one, of all panels) sits right of the first panel, off the data.
    """
    absent = [f"`{c}`" for c in (id_col, time_col) if c not in forecasts]
    absent += [f"`{c}`" for c in (id_col, time_col, target_col) if c not in df]
    if absent:
        raise ValueError(
            f"plot_forecast reads the columns {id_col!r}, {time_col!r} and {target_col!r}: "
            f"{', '.join(dict.fromkeys(absent))} missing from `forecasts` or `df`. Pass id_col=, time_col= and "
            "target_col= as the model names them (a backtest's frames use unique_id, ds and y)."
        )
    ids = list(unique_ids) if unique_ids is not None else list(pd.unique(forecasts[id_col]))[:max_series]
    point, lo, hi = point_and_band(forecasts, model)
    extra = [b for b in BASELINES if b in forecasts.columns and b != point] if baselines is None else list(baselines)
    if missing := [b for b in extra if b not in forecasts.columns]:
        raise ValueError(f"`baselines` names columns that `forecasts` lacks: {missing}.")
    fig, axes = plt.subplots(len(ids), 1, figsize=(10, 2.3 * len(ids)), squeeze=False, layout="constrained")
    for ax, uid in zip(axes[:, 0], ids, strict=False):
        fc = forecasts[forecasts[id_col] == uid]
        if "cutoff" in fc.columns:
            fc = fc[fc["cutoff"] == fc["cutoff"].max()]
        if fc.empty:
            raise ValueError(f"`forecasts` has no rows for series {shown_id(uid)}.")
        series = df[df[id_col] == uid].sort_values(time_col)
        origin = fc[time_col].min()
        past = series[series[time_col] < origin].tail(history or 4 * len(fc))
        after = series[(series[time_col] >= origin) & (series[time_col] <= fc[time_col].max())]
        draw_forecast(ax, past, fc, after, point, lo, hi, time_col, target_col, extra)
        name = title.get(uid, uid) if isinstance(title, Mapping) else uid if title is None else title
        literal(ax.set_title(str(name), loc="left", fontsize=10), ax.set_ylabel(target_col if ylabel is None else ylabel))
        ax.grid(alpha=0.3)
        if pd.api.types.is_datetime64_any_dtype(series[time_col]):
            calendar_ticks(ax, 9, getattr(series[time_col].dt, "tz", None))
    legend_outside(axes[0, 0], axes[:, 0])
    return fig
