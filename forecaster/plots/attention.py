"""The attention plots: one series' map with its forecast and shares, and the attention profile across series.

Attention weights show where each horizon step *looked* in the history: a diagnostic of routing inside
the network. What each history point contributed to the forecast is its share in ``explain``'s account,
drawn under each map. The numbers come from :mod:`forecaster.plots.attention_analysis`.
"""

from __future__ import annotations

import textwrap
import warnings

import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ..data.frames import shown_id, shown_ids
from ..data.panel import padding_expected
from ..model.fitted import history_in_zone
from .attention_analysis import attention_grid, attention_profile, forecast_sources
from .forecast import calendar_ticks, draw_forecast, legend_outside, point_and_band
from .text import NOTE_WIDTH, ROUTING, account_caption, literal, readable

# Characters per line of the title over the shares (8 pt over the map's width, its colour bar aside).
TITLE_WIDTH = 135


def _edges(times: pd.DatetimeIndex) -> np.ndarray:
    numbers = mdates.date2num(times.to_pydatetime()) if len(times) else np.array([])
    if len(numbers) == 1:
        return np.array([numbers[0] - 0.5, numbers[0] + 0.5])
    mids = (numbers[1:] + numbers[:-1]) / 2
    return np.concatenate([[numbers[0] - (mids[0] - numbers[0])], mids, [numbers[-1] + (numbers[-1] - mids[-1])]])


def plot_attention(
    model_or_explanation,
    df: pd.DataFrame | None = None,
    unique_id=None,
    future_df: pd.DataFrame | None = None,
    forecasts: pd.DataFrame | None = None,
    actuals: pd.DataFrame | None = None,
    id_col: str = "unique_id",
    time_col: str = "ds",
    target_col: str = "y",
    *,
    vmax: float | None = None,
    title: str | None = None,
) -> Figure:
    """History and forecast on top; below, horizon step x attended history, and each point's share of the forecast.

    Args:
        model_or_explanation: a fitted ``Seq2SeqForecaster`` (then ``explain`` and ``predict`` are run
            on ``df``/``future_df``) or an ``explain`` frame (best with ``include_padding=True``).
        df: history to forecast from (for a model) or to draw (for a frame; rows after the origin are actuals).
        unique_id: which series; default the first.
        future_df: future-known covariates for the horizon (model mode).
        forecasts: forecasts to draw (frame mode; ``predict`` or backtest columns).
        actuals: observed values after the origin to draw against the forecast.
        vmax: the top of the colour scale (0 at the bottom); default this map's largest weight.
            Pass the largest over several series to draw them on one scale.
        title: the top panel's title; default ``"<id>: where each horizon step looked"``.

    Every panel has the forecast panel's time axis, so each column of the map sits under its own period
    (the horizon part of the lower panels stays empty). Padded positions (before the series starts) are hatched
    grey, not drawn as zero weight; periods whose target is missing (given the history) are dotted, and steps a
    closure forecast at zero are cross-hatched. The shares panel needs a frame with ``contribution``; the colour bar
    is beside the heatmap.
    """
    explanation, forecast = model_or_explanation, forecasts
    history_df = df
    if hasattr(model_or_explanation, "explain"):
        fitted = model_or_explanation
        id_col, time_col, target_col = fitted.id_col, fitted.time_col, fitted.target_col
        own = df is None  # the model's kept history, whose short series its fit named
        if unique_id is not None:  # explain and forecast this series only (without df: its training tail)
            df, future_df = _one_series(history_in_zone(fitted) if own else df, future_df, id_col, unique_id, own)
        with padding_expected(own):
            explanation = fitted.explain(df=df, future_df=future_df, include_padding=True)
        with warnings.catch_warnings():  # the same inputs: explain has said what there is to say about them
            warnings.simplefilter("ignore")
            forecast = fitted.predict(df=df, future_df=future_df)
        history_df = history_in_zone(fitted) if df is None else df
    if actuals is not None:
        history_df = pd.concat([history_df, actuals]).drop_duplicates([id_col, time_col], keep="last")
    unique_id = explanation[id_col].iloc[0] if unique_id is None else unique_id
    ex = explanation[explanation[id_col] == unique_id]
    if ex.empty:
        _require_series(explanation, id_col, unique_id, "the explanation")
    history_col = f"{time_col}_history"
    grid, padded = attention_grid(ex, history_col)
    hist_times = pd.DatetimeIndex(grid.columns)
    accounted = "contribution" in ex

    ratios = [1.1, 1.4, 0.9][: 2 + accounted]
    fig, axes = plt.subplots(len(ratios), 1, figsize=(10, 6.5 + 2.4 * accounted), height_ratios=ratios, layout="constrained")
    fig.get_layout_engine().set(rect=(0, 0.045, 1, 0.955), h_pad=0.06)  # room for the note below
    top, bottom = axes[0], axes[1]
    x_edges = _edges(hist_times)
    names = (id_col, time_col, target_col)
    _draw_forecast_panel(top, ex, history_df, forecast, unique_id, names, x_edges, hist_times, title)
    _draw_heatmap(fig, bottom, grid, padded, x_edges, top.get_xlim(), ex[time_col].min(), vmax)
    _mark_unread(bottom, ex, grid, _missing_targets(history_df, unique_id, hist_times, names) & ~padded, x_edges)
    if accounted:
        axes[2].sharex(bottom)
        bottom.tick_params(labelbottom=False)
        _draw_sources(axes[2], ex, hist_times, x_edges, history_col)
    if pd.api.types.is_datetime64_any_dtype(ex[time_col]):  # dates that fit the axis, in the data's zone
        for ax in axes:
            calendar_ticks(ax, 10, getattr(ex[time_col].dt, "tz", None))
    axes[-1].set_xlabel("attended history period (the forecast panel's time axis)")
    # The note in lines of the figure's width, so that it never widens the saved figure past its panels.
    fig.text(0.01, 0.005, textwrap.fill(account_caption(ex), NOTE_WIDTH), fontsize=8, color="0.35", va="bottom")
    return fig


def _draw_forecast_panel(ax, ex, history_df, forecast, unique_id, names, x_edges, hist_times, title) -> None:
    """The top panel of a map: history, actuals after the origin and the forecast, from the window's start."""
    id_col, time_col, target_col = names
    origin = ex[time_col].min()
    past = after = fc = point = lo = hi = None
    if history_df is not None:
        series = history_df[history_df[id_col] == unique_id].sort_values(time_col)
        series = series[series[time_col] >= hist_times[0]]  # the window the map covers: the y-axis is scaled to it
        past, after = series[series[time_col] < origin], series[series[time_col] >= origin]
        after = after[after[time_col] <= ex[time_col].max()]
    if forecast is not None:
        fc = forecast[forecast[id_col] == unique_id]
        point, lo, hi = point_and_band(fc, None)
    ax.xaxis_date()
    draw_forecast(ax, past, fc, after, point, lo, hi, time_col, target_col)
    half = x_edges[-1] - mdates.date2num(hist_times[-1].to_pydatetime())
    ax.set_xlim(x_edges[0], max(x_edges[-1], mdates.date2num(pd.Timestamp(ex[time_col].max()).to_pydatetime()) + half))
    ax.axvline(mdates.date2num(pd.Timestamp(origin).to_pydatetime()), color="0.5", lw=0.8, ls=":")
    heading = f"{unique_id}: where each horizon step looked" if title is None else title
    literal(ax.set_title(heading, loc="left", fontsize=11), ax.set_ylabel(target_col))
    legend_outside(ax)
    ax.grid(alpha=0.3)


def _draw_heatmap(fig, ax, grid: pd.DataFrame, padded: np.ndarray, x_edges, xlim, origin, vmax) -> None:
    """Horizon step x attended period, on the forecast panel's time axis ``xlim``; padding hatched, colour bar beside."""
    y_edges = np.append(grid.index.to_numpy() - 0.5, grid.index[-1] + 0.5)
    values = np.ma.masked_where(np.broadcast_to(padded[None, :], grid.shape), grid.to_numpy())
    mesh = ax.pcolormesh(x_edges, y_edges, values, cmap="viridis", shading="flat", vmin=0, vmax=vmax)
    for i in np.flatnonzero(padded):
        ax.axvspan(x_edges[i], x_edges[i + 1], facecolor="0.85", hatch="///", edgecolor="0.6", lw=0)
    ax.set_ylabel("horizon step")
    ax.invert_yaxis()
    ax.xaxis_date()
    ax.set_xlim(xlim)  # the forecast panel's time axis: each column under its own period
    ax.axvline(mdates.date2num(pd.Timestamp(origin).to_pydatetime()), color="0.5", lw=0.8, ls=":")
    extend = "max" if vmax is not None and np.ma.max(values) > vmax else "neither"  # an arrow when weights pass vmax
    fig.colorbar(mesh, cax=ax.inset_axes([1.015, 0, 0.022, 1]), extend=extend, label="attention weight")  # beside it only
    if padded.any():
        patch = Patch(facecolor="0.85", hatch="///", edgecolor="0.6", label="padding (no data)")
        ax.legend(handles=[patch], loc="lower left", bbox_to_anchor=(0.0, 1.0), fontsize=8, borderaxespad=0.2)


def _mark_unread(ax, ex: pd.DataFrame, grid: pd.DataFrame, missing: np.ndarray, x_edges: np.ndarray) -> None:
    """Mark on the map what the forecast did not read: the rows of steps a closure forecast at zero, and the columns
    of periods whose target is missing (``missing``, bool per column)."""
    if "closed_step" in ex:
        closed = ex.groupby("step")["closed_step"].any().reindex(grid.index, fill_value=False).to_numpy()
        if closed.any():
            _mark_closed(ax, grid.index.to_numpy()[closed], x_edges)
    if missing.any():
        _mark_missing(ax, np.flatnonzero(missing), x_edges)


def _missing_targets(history_df, unique_id, hist_times: pd.DatetimeIndex, names) -> np.ndarray:
    """Which attended periods (bool, as ``hist_times``) hold no observed target of the series in ``history_df``: a
    missing value the network masks (none known without a history)."""
    id_col, time_col, target_col = names
    if history_df is None or target_col not in history_df:
        return np.zeros(len(hist_times), dtype=bool)
    series = history_df[history_df[id_col] == unique_id]
    observed = pd.DatetimeIndex(series.loc[series[target_col].notna(), time_col])
    return ~hist_times.isin(observed)


def _legend_entry(ax, patch: Patch) -> None:
    """Add ``patch`` to the legend above the map (padding, closed steps, missing targets), in one row."""
    handles = [patch] if ax.get_legend() is None else [*ax.get_legend().legend_handles, patch]
    ax.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.0, 1.0), fontsize=8, borderaxespad=0.2, ncols=3)


def _mark_missing(ax, columns: np.ndarray, x_edges: np.ndarray) -> None:
    """Dot the columns of periods whose target is missing: masked for the network, so no point's share, though with
    the default design the attention may still route through their encoder state."""
    style = {"facecolor": "none", "hatch": "..", "edgecolor": "0.85"}
    for i in columns:
        ax.axvspan(x_edges[i], x_edges[i + 1], lw=0, **style)
    _legend_entry(ax, Patch(**style, label="missing target (no share)"))


def _mark_closed(ax, steps: np.ndarray, x_edges: np.ndarray) -> None:
    """Cross-hatch the rows of the steps a closure forecast at zero, over the history's columns ``x_edges``: their
    weights are the network's routing, which the forecast did not use."""
    style = {"facecolor": "white", "hatch": "xx", "edgecolor": "0.45"}
    for step in steps:
        ax.fill_between(x_edges[[0, -1]], step - 0.5, step + 0.5, alpha=0.55, lw=0, **style)
    _legend_entry(ax, Patch(**style, label="closed step: forecast at zero, not read"))


def _draw_sources(ax, ex: pd.DataFrame, hist_times: pd.DatetimeIndex, x_edges: np.ndarray, history_col: str) -> None:
    points, parts = forecast_sources(ex, history_col[: -len("_history")])
    shares = points.reindex(hist_times).fillna(0.0).to_numpy()
    ax.bar(x_edges[:-1], shares, width=np.diff(x_edges), align="edge", color="tab:purple", alpha=0.8)
    ax.axhline(0.0, color="0.4", lw=0.6)
    ax.set_ylabel("share of forecast\n(target units)")
    head = f"network head (not split over points) {readable(parts['head'])}, " if parts["head"] else ""
    states = ex.attrs.get("attention_values") == "states"
    baseline = "window level x network weight" if states else "step and statics x network weight"
    floor = f", lifted to zero (nonnegative) {readable(parts['floor'])}" if parts["floor"] else ""
    steps = ex["step"].nunique()
    shut = int(parts["closed_steps"])
    closed = f"; {shut} of {steps} steps closed, forecast at zero by the closure (no part)" if shut else ""
    title = (
        f"where the forecast came from (mean over steps): history points, summed, {readable(shares.sum())}, {head}"
        f"{baseline} {readable(parts['baseline'])}, covariates {readable(parts['covariates'])}, statistical partners "
        f"{readable(parts['partners'])}{floor}; forecast {readable(parts['forecast'])}{closed}"
    )
    ax.set_title(textwrap.fill(title, TITLE_WIDTH), loc="left", fontsize=8)
    ax.grid(alpha=0.3)


def plot_attention_profile(
    explanation: pd.DataFrame, season_length: int | None = None, relative_to: str = "target", id_col: str | None = None
) -> Figure:
    """Mean attention weight by lag across series and origins, with the interquartile band across series.

    ``relative_to="target"`` (the default): lags from each step's target period, where the season lines mean
    "the same season before"; ``"origin"``: lags from the forecast origin. ``id_col`` None: the frame's first column.
    """
    profile = attention_profile(explanation, relative_to, id_col)
    fig, ax = plt.subplots(figsize=(9, 3.4))
    ax.fill_between(profile.index, profile["q25"], profile["q75"], color="C0", alpha=0.25, label="25-75% of series")
    ax.plot(profile.index, profile["mean"], color="C0", lw=1.6, marker="o", ms=3, label="mean weight")
    if season_length and season_length > 1:
        for k in range(0, int(profile.index.max()) + 1, season_length):
            ax.axvline(k, color="C3", lw=0.8, ls=":", alpha=0.7)
        ax.plot([], [], color="C3", ls=":", label=f"multiples of the season ({season_length})")
    where = "the forecast origin" if relative_to == "origin" else "the target period"
    ax.set_xlabel(f"lag (periods before {where})")
    ax.set_ylabel("attention weight")
    ax.set_title("Attention profile: where the model looks, on average", loc="left", fontsize=11)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.text(0.01, 0.005, ROUTING, fontsize=8, color="0.35")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    return fig


def _one_series(df: pd.DataFrame, future_df, id_col: str, unique_id, own: bool) -> tuple:
    """``df`` and ``future_df`` cut to the series ``unique_id`` (``own``: ``df`` is the model's kept history)."""
    _require_series(df, id_col, unique_id, "the model's history" if own else "`df`")
    return tuple(f if f is None else f[f[id_col] == unique_id] for f in (df, future_df))


def _require_series(frame: pd.DataFrame, id_col: str, unique_id, where: str) -> pd.DataFrame:
    """``frame``, refused where ``unique_id`` names no series of it (a typo, or ``'3'`` for the id ``3``), naming it."""
    known = pd.Index(frame[id_col].unique())
    if not known.isin([unique_id]).any():
        raise ValueError(
            f"`unique_id` {shown_id(unique_id)} names no series of {where}, which has {len(known)}: {shown_ids(known)}."
        )
    return frame
