"""Forecast and attention plots (matplotlib; every function returns the Figure and never shows it).

Attention weights show where each horizon step *looked* in the history: a diagnostic of routing inside
the network. What each history point contributed to the forecast is its share in ``explain``'s account,
drawn under each map (exact with observation values; integrated gradients with state values).
"""

from __future__ import annotations

import hashlib
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.patches import Patch
from matplotlib.text import Text

from .model.faithfulness import occlusions
from .model.outputs import BASELINES

ROUTING = "Attention shows where the model looked (routing), not why it forecast what it did."
# The note under a map without shares: a model with log_target has none.
CAUTION = (
    f"{ROUTING} No shares are given for a model with log_target: its parts would add up to the log of the "
    "forecast, not to the forecast."
)
OBSERVATION_SHARES = (
    "Colours: attention weights. With observation values, weight x observation (moved to the target by the seasonal "
    "and trend adjustment, plus its linear-skip term) is each point's exact share of the forecast: the bars below; "
    "the step parts are in their title."
)
GRADIENT_SHARES = (
    "Colours: attention weights, where the network read, not what drove the forecast. The bars below are the shares: "
    "each point's part of what the network adds to the window's level, by integrated gradients from a flat history at "
    "that level; the level and the other step parts are in their title."
)
SHARES = "Colours: attention weights. The bars below are each point's share of the forecast; the step parts are in their title."
# Characters per line of the note under a map (8 pt on a 10-inch figure).
NOTE_WIDTH = 150
# What an ``explain`` frame's account is, by the model's ``attention_values`` (``explain`` records it in ``attrs``).
CAPTIONS = {"observations": OBSERVATION_SHARES, "states": GRADIENT_SHARES}


def account_caption(explanation: pd.DataFrame) -> str:
    """The note under a map: what its colours and bars are, for the account the frame holds (none: routing only)."""
    if "contribution" not in explanation:
        return CAUTION
    return CAPTIONS.get(explanation.attrs.get("attention_values"), SHARES)


def readable(value, digits: int = 4) -> str:
    """``value`` to ``digits`` significant digits in plain decimals, never in scientific notation.

    ``132_100.4`` reads ``132100``, ``0.09034`` reads ``0.09034``, ``1.5e-7`` reads ``0.0000001500``; NaN reads ``""``.
    The reports and the attention plots' titles print every WQL, MASE and share so.
    """
    value = float(value)
    if not np.isfinite(value):
        return "" if np.isnan(value) else str(value)
    if value == 0.0:
        return "0"
    decimals = max(0, digits - 1 - int(np.floor(np.log10(abs(value)))))
    return f"{value:.{decimals}f}"


def literal(*texts: Text | Legend | None) -> None:
    """Draw text made from data (series ids, model and column names) as written.

    Matplotlib reads a string with two ``$`` as mathtext (``price_$1_to_$2`` fails to draw; ``cost $5 to $9``
    draws italics) and, under ``text.usetex``, hands it to TeX. Pass the ``Text`` objects that ``set_title``
    and friends return, or a ``Legend`` for its entries.
    """
    for text in texts:
        for item in text.get_texts() if isinstance(text, Legend) else [] if text is None else [text]:
            item.set_usetex(False)
            item.set_parse_math(False)


def series_file_name(folder: str | Path, prefix: str, unique_id, suffix: str = ".png") -> Path:
    """A path in ``folder`` for a file about one series, safe whatever the id holds.

    The name is ``prefix`` + a slug of the id (``[A-Za-z0-9._-]``, at most 40 characters) + 10 hex digits of the
    SHA-256 of the full id, so ids that slug alike (``a/b``, ``a_b``) get different files, and ``..``, ``/`` or a
    drive cannot lead outside ``folder``.
    """
    text = str(unique_id)
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._-")[:40] or "series"
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    folder = Path(folder)
    path = folder / f"{prefix}{slug}_{digest}{suffix}"
    if path.resolve().parent != folder.resolve():
        raise ValueError(f"The file name for series {unique_id!r} leads outside {folder}: {path.name!r}.")
    return path


def _point_and_band(forecasts: pd.DataFrame, model: str | None) -> tuple[str, str | None, str | None]:
    point = model or ("y_hat" if "y_hat" in forecasts.columns else "seq2seq")
    quantile_cols = sorted(
        (c for c in forecasts.columns if c.startswith(f"{point}_q")), key=lambda c: float(c.rsplit("_q", 1)[1])
    )
    if len(quantile_cols) >= 2:
        return point, quantile_cols[0], quantile_cols[-1]
    if f"{point}_lo" in forecasts.columns:
        return point, f"{point}_lo", f"{point}_hi"
    return point, None, None


def _draw_forecast(ax, history, forecast, actual, point, lo, hi, time_col, target_col, baselines=()) -> None:
    """History (solid), actuals (dashed), forecast with its band and baselines (thin dashed); any part may be None."""
    if history is not None:
        ax.plot(history[time_col], history[target_col], color="0.2", lw=1.2, label="history")
    if actual is not None and len(actual):
        ax.plot(actual[time_col], actual[target_col], color="0.2", lw=1.2, ls="--", label="actual")
    if forecast is None:
        return
    ax.plot(forecast[time_col], forecast[point], color="C0", lw=1.6, label="forecast")
    for i, name in enumerate(baselines):
        ax.plot(forecast[time_col], forecast[name], color=f"C{i + 1}", lw=0.9, ls="--", label=name)
    if lo is not None:
        low, high = forecast[lo].to_numpy(), forecast[hi].to_numpy()
        label = f"{lo.rsplit('_', 1)[-1]}-{hi.rsplit('_', 1)[-1]} interval"
        ax.fill_between(forecast[time_col], low, high, color="C0", alpha=0.2, label=label)


def _legend_outside(ax, panels=None) -> None:
    """One legend of every labelled artist of ``panels`` (default ``ax``), beside ``ax`` on its right, off the data."""
    entries: dict = {}
    for panel in [ax] if panels is None else panels:
        for handle, label in zip(*panel.get_legend_handles_labels(), strict=True):
            entries.setdefault(label, handle)
    if entries:  # an explain frame alone draws no history or forecast
        literal(ax.legend(list(entries.values()), list(entries), loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8))


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
    ids = list(unique_ids) if unique_ids is not None else list(pd.unique(forecasts[id_col]))[:max_series]
    point, lo, hi = _point_and_band(forecasts, model)
    extra = [b for b in BASELINES if b in forecasts.columns and b != point] if baselines is None else list(baselines)
    if missing := [b for b in extra if b not in forecasts.columns]:
        raise ValueError(f"`baselines` names columns that `forecasts` lacks: {missing}.")
    fig, axes = plt.subplots(len(ids), 1, figsize=(10, 2.3 * len(ids)), squeeze=False, layout="constrained")
    for ax, uid in zip(axes[:, 0], ids, strict=False):
        fc = forecasts[forecasts[id_col] == uid]
        if "cutoff" in fc.columns:
            fc = fc[fc["cutoff"] == fc["cutoff"].max()]
        if fc.empty:
            raise ValueError(f"`forecasts` has no rows for series {uid!r}.")
        series = df[df[id_col] == uid].sort_values(time_col)
        origin = fc[time_col].min()
        past = series[series[time_col] < origin].tail(history or 4 * len(fc))
        after = series[(series[time_col] >= origin) & (series[time_col] <= fc[time_col].max())]
        _draw_forecast(ax, past, fc, after, point, lo, hi, time_col, target_col, extra)
        name = title.get(uid, uid) if isinstance(title, Mapping) else uid if title is None else title
        literal(ax.set_title(str(name), loc="left", fontsize=10), ax.set_ylabel(target_col if ylabel is None else ylabel))
        ax.grid(alpha=0.3)
    _legend_outside(axes[0, 0], axes[:, 0])
    return fig


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
    grey, not drawn as zero weight. The shares panel needs a frame with ``contribution``; the colour bar is
    beside the heatmap.
    """
    explanation, forecast = model_or_explanation, forecasts
    history_df = df
    if hasattr(model_or_explanation, "explain"):
        fitted = model_or_explanation
        id_col, time_col, target_col = fitted.id_col, fitted.time_col, fitted.target_col
        if unique_id is not None:  # explain and forecast this series only
            df, future_df = (f if f is None else f[f[id_col] == unique_id] for f in (df, future_df))
        explanation = fitted.explain(df=df, future_df=future_df, include_padding=True)
        forecast = fitted.predict(df=df, future_df=future_df)
        history_df = fitted.history_ if df is None else df
    if actuals is not None:
        history_df = pd.concat([history_df, actuals]).drop_duplicates([id_col, time_col], keep="last")
    unique_id = explanation[id_col].iloc[0] if unique_id is None else unique_id
    ex = explanation[explanation[id_col] == unique_id]
    if ex.empty:
        raise ValueError(f"No attention weights for series {unique_id!r}.")
    history_col = f"{time_col}_history"
    grid = ex.pivot_table(index="step", columns=history_col, values="weight", aggfunc="mean").sort_index(axis=1)
    hist_times = pd.DatetimeIndex(grid.columns)
    padded = np.zeros(len(hist_times), bool)
    if "padded" in ex:
        padded = ex.groupby(history_col)["padded"].first().reindex(hist_times).fillna(False).to_numpy()
    accounted = "contribution" in ex

    ratios = [1.1, 1.4, 0.9][: 2 + accounted]
    fig, axes = plt.subplots(len(ratios), 1, figsize=(10, 6.5 + 2.4 * accounted), height_ratios=ratios, layout="constrained")
    fig.get_layout_engine().set(rect=(0, 0.045, 1, 0.955), h_pad=0.06)  # room for the note below
    top, bottom = axes[0], axes[1]
    x_edges = _edges(hist_times)
    names = (id_col, time_col, target_col)
    _draw_forecast_panel(top, ex, history_df, forecast, unique_id, names, x_edges, hist_times, title)
    _draw_heatmap(fig, bottom, grid, padded, x_edges, top.get_xlim(), ex[time_col].min(), vmax)
    if accounted:
        axes[2].sharex(bottom)
        bottom.tick_params(labelbottom=False)
        _draw_sources(axes[2], ex, hist_times, x_edges, history_col)
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
        point, lo, hi = _point_and_band(fc, None)
    ax.xaxis_date()
    _draw_forecast(ax, past, fc, after, point, lo, hi, time_col, target_col)
    half = x_edges[-1] - mdates.date2num(hist_times[-1].to_pydatetime())
    ax.set_xlim(x_edges[0], max(x_edges[-1], mdates.date2num(pd.Timestamp(ex[time_col].max()).to_pydatetime()) + half))
    ax.axvline(mdates.date2num(pd.Timestamp(origin).to_pydatetime()), color="0.5", lw=0.8, ls=":")
    heading = f"{unique_id}: where each horizon step looked" if title is None else title
    literal(ax.set_title(heading, loc="left", fontsize=11), ax.set_ylabel(target_col))
    _legend_outside(ax)
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


def _explained_columns(explanation: pd.DataFrame) -> tuple[str, str]:
    """The id and time columns of an ``explain`` frame, named as the model names them (the first two columns)."""
    history = [c for c in explanation.columns if str(c).endswith("_history")]
    time_col = str(history[0]).removesuffix("_history") if history else str(explanation.columns[1])
    return str(explanation.columns[0]), time_col


def forecast_sources(explanation: pd.DataFrame, time_col: str | None = None) -> tuple[pd.Series, dict[str, float]]:
    """Where one series' forecast came from, per history point and per other part, averaged over the horizon steps.

    ``time_col``: the model's time column; None reads it from the frame (``explain`` names it ``<time_col>_history``).

    Returns each history point's mean share of a step's forecast (indexed by its time) and the mean of the step
    parts (``baseline``, ``covariates``, ``partners``, ``head``) and of the forecast:
    the shares plus the parts equal the mean forecast.
    """
    time_col = time_col or _explained_columns(explanation)[1]
    history_col = f"{time_col}_history"
    points = explanation.groupby(history_col)["contribution"].sum() / explanation["step"].nunique()
    names = ("baseline", "covariates", "partners", "head")
    if "step_head" not in explanation:  # frames from before the state design's account: observation values only
        explanation = explanation.assign(step_head=0.0)
    per_step = explanation.groupby("step")[[f"step_{name}" for name in names] + ["y_hat"]].first().mean()
    parts = {name: float(per_step[f"step_{name}"]) for name in names}
    return points, {**parts, "forecast": float(per_step["y_hat"])}


def _draw_sources(ax, ex: pd.DataFrame, hist_times: pd.DatetimeIndex, x_edges: np.ndarray, history_col: str) -> None:
    points, parts = forecast_sources(ex, history_col[: -len("_history")])
    shares = points.reindex(hist_times).fillna(0.0).to_numpy()
    ax.bar(x_edges[:-1], shares, width=np.diff(x_edges), align="edge", color="tab:purple", alpha=0.8)
    ax.axhline(0.0, color="0.4", lw=0.6)
    ax.set_ylabel("share of forecast")
    head = f"network head (not split over points) {readable(parts['head'])}, " if parts["head"] else ""
    states = ex.attrs.get("attention_values") == "states"
    baseline = "window level x network weight" if states else "step and statics x network weight"
    title = (
        f"where the forecast came from (mean over steps): history points, summed, {readable(shares.sum())},\n{head}"
        f"{baseline} {readable(parts['baseline'])}, covariates {readable(parts['covariates'])}, statistical partners "
        f"{readable(parts['partners'])}; forecast {readable(parts['forecast'])}"
    )
    ax.set_title(title, loc="left", fontsize=8)
    ax.grid(alpha=0.3)


def attention_profile(explanation: pd.DataFrame, relative_to: str = "target", id_col: str | None = None) -> pd.DataFrame:
    """Mean attention weight by lag, with the spread across series (``id_col`` None: the frame's first column).

    ``relative_to="origin"``: lag = origin minus attended time (0 is the last observed period).
    ``relative_to="target"``: lag = target time minus attended time, where a seasonal model should peak at
    multiples of the season length.
    """
    id_col = id_col or _explained_columns(explanation)[0]
    ex = explanation[~explanation["padded"]] if "padded" in explanation else explanation
    if relative_to == "origin":
        lag = ex["lag"]
    elif relative_to == "target":
        lag = ex["lag"] + ex["step"]
    else:
        raise ValueError(f"`relative_to` must be 'origin' or 'target'; got {relative_to!r}.")
    per_series = ex.assign(lag=lag.to_numpy()).groupby([id_col, "lag"])["weight"].mean().unstack(id_col)
    stats = {"mean": per_series.mean(axis=1), "q25": per_series.quantile(0.25, axis=1), "q75": per_series.quantile(0.75, axis=1)}
    return pd.DataFrame(stats).rename_axis("lag")


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


@dataclass(frozen=True)
class AttentionDiagnostics:
    """Attention in numbers.

    Attributes:
        padded_mass: largest total weight any (series, step) put on padding (must be 0);
            NaN when the frame omits padded rows (use ``explain(include_padding=True)``).
        mean_entropy: mean entropy of the attention per step, in nats.
        normalised_entropy: entropy over its maximum (1 = uniform over the history).
        last_season_share: mean weight on the last ``season_length`` periods before the origin.
        by_step: the same per horizon step.
        occlusion_ratio: how much more the forecast moves when the most attended history points are replaced
            by the series' mean than when the least attended are (see ``forecaster.model.faithfulness``);
            well above 1 for a faithful map. NaN unless ``attention_diagnostics`` was given the model and its data.
    """

    padded_mass: float
    mean_entropy: float
    normalised_entropy: float
    last_season_share: float
    by_step: pd.DataFrame
    occlusion_ratio: float = float("nan")
    share_occlusion_ratio: float = float("nan")  # the same check ranking points by their share of the forecast


def attention_diagnostics(
    explanation: pd.DataFrame,
    season_length: int,
    id_col: str = "unique_id",
    model=None,
    df: pd.DataFrame | None = None,
    future_df: pd.DataFrame | None = None,
    n_points: int = 3,
) -> AttentionDiagnostics:
    """Padding mass, entropy and last-season share of an ``explain`` frame (with or without padding rows).

    Given the fitted ``model`` and the history ``df`` the frame explains (and ``future_df``), also
    the occlusion ratio of ``n_points`` most against least attended points, and of the points with the largest
    against the smallest shares where the frame has them (``contribution``).
    """
    keys = [id_col, "step"]
    if "padded" in explanation:
        padded = explanation["padded"].to_numpy()
        padded_mass = float(explanation[padded].groupby(keys)["weight"].sum().max()) if padded.any() else 0.0
    else:  # padded rows were omitted: their mass cannot be read from this frame
        padded, padded_mass = np.zeros(len(explanation), dtype=bool), float("nan")
    valid = explanation[~padded]
    w = valid["weight"].to_numpy()
    terms = valid.assign(
        plogp=np.where(w > 0, -w * np.log(np.where(w > 0, w, 1.0)), 0.0), recent=(valid["lag"] < season_length) * w
    )
    per = terms.groupby(keys).agg(entropy=("plogp", "sum"), recent=("recent", "sum"), n=("weight", "size"))
    per["normalised"] = per["entropy"] / np.log(per["n"].clip(lower=2))
    by_step = per.groupby("step")[["entropy", "normalised", "recent"]].mean().rename(columns={"recent": "last_season_share"})
    ratio = share_ratio = float("nan")
    if model is not None and df is not None:
        rankings = ("weight", "contribution") if "contribution" in explanation else ("weight",)
        results = occlusions(model, df, future_df, n_points, rank_by=rankings)
        ratio = results["weight"].ratio
        share_ratio = results["contribution"].ratio if "contribution" in results else float("nan")
    return AttentionDiagnostics(
        padded_mass=padded_mass,
        mean_entropy=float(per["entropy"].mean()),
        normalised_entropy=float(per["normalised"].mean()),
        last_season_share=float(per["recent"].mean()),
        by_step=by_step,
        occlusion_ratio=ratio,
        share_occlusion_ratio=share_ratio,
    )
