"""Attention and the forecast's account in numbers, read from an ``explain`` frame: the map's grid, where a
forecast came from, the attention profile by lag, and diagnostics (padding mass, entropy, last-season share and,
given the model, the occlusion ratios)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..model.faithfulness import occlusions


def explained_columns(explanation: pd.DataFrame) -> tuple[str, str]:
    """The id and time columns of an ``explain`` frame, named as the model names them (the first two columns)."""
    history = [c for c in explanation.columns if str(c).endswith("_history")]
    time_col = str(history[0]).removesuffix("_history") if history else str(explanation.columns[1])
    return str(explanation.columns[0]), time_col


def attention_grid(ex: pd.DataFrame, history_col: str) -> tuple[pd.DataFrame, np.ndarray]:
    """One series' map: the mean weight per horizon step (rows) and attended period (columns, in time order), and
    which of those periods are padding (before the series starts; none when the frame omits padded rows)."""
    grid = ex.pivot_table(index="step", columns=history_col, values="weight", aggfunc="mean").sort_index(axis=1)
    hist_times = pd.DatetimeIndex(grid.columns)
    padded = np.zeros(len(hist_times), bool)
    if "padded" in ex:
        padded = ex.groupby(history_col)["padded"].first().reindex(hist_times).fillna(False).to_numpy()
    return grid, padded


def read_rows(explanation: pd.DataFrame) -> pd.DataFrame:
    """The rows of an ``explain`` frame whose step the forecast read its history for: without the steps a closure
    forecast at zero (``closed_step``), whose attention the network computed and the forecast never used."""
    return explanation[~explanation["closed_step"].to_numpy(dtype=bool)] if "closed_step" in explanation else explanation


def forecast_sources(explanation: pd.DataFrame, time_col: str | None = None) -> tuple[pd.Series, dict[str, float]]:
    """Where one series' forecast came from, per history point and per other part, averaged over the horizon steps.

    ``time_col``: the model's time column; None reads it from the frame (``explain`` names it ``<time_col>_history``).

    Returns each history point's mean share of a step's forecast (indexed by its time) and the mean of the step
    parts (``baseline``, ``covariates``, ``partners``, ``head``, ``floor``: what lifted a negative median to zero) and
    of the forecast: the shares plus the parts equal the mean forecast. Also ``closed_steps``, how many of the steps a
    closure forecast at zero (every part of such a step is zero, so they pull the means towards zero).
    """
    time_col = time_col or explained_columns(explanation)[1]
    history_col = f"{time_col}_history"
    points = explanation.groupby(history_col)["contribution"].sum() / explanation["step"].nunique()
    names = ("baseline", "covariates", "partners", "head", "floor")
    absent = {f"step_{name}": 0.0 for name in names if f"step_{name}" not in explanation}  # frames of older versions
    explanation = explanation.assign(**absent, closed_step=explanation["closed_step"] if "closed_step" in explanation else False)
    per_step = explanation.groupby("step")[[f"step_{name}" for name in names] + ["y_hat", "closed_step"]].first()
    means = per_step.drop(columns="closed_step").mean()
    parts = {name: float(means[f"step_{name}"]) for name in names}
    return points, {**parts, "forecast": float(means["y_hat"]), "closed_steps": float(per_step["closed_step"].sum())}


def attention_profile(explanation: pd.DataFrame, relative_to: str = "target", id_col: str | None = None) -> pd.DataFrame:
    """Mean attention weight by lag, with the spread across series (``id_col`` None: the frame's first column).

    ``relative_to="origin"``: lag = origin minus attended time (0 is the last observed period).
    ``relative_to="target"``: lag = target time minus attended time, where a seasonal model should peak at
    multiples of the season length. Steps a closure forecast at zero are left out: the forecast did not read for them.
    """
    id_col = id_col or explained_columns(explanation)[0]
    ex = read_rows(explanation)
    ex = ex[~ex["padded"]] if "padded" in ex else ex
    if relative_to == "origin":
        lag = ex["lag"]
    elif relative_to == "target":
        lag = ex["lag"] + ex["step"]
    else:
        raise ValueError(f"`relative_to` must be 'origin' or 'target'; got {relative_to!r}.")
    per_series = ex.assign(lag=lag.to_numpy()).groupby([id_col, "lag"])["weight"].mean().unstack(id_col)
    stats = {"mean": per_series.mean(axis=1), "q25": per_series.quantile(0.25, axis=1), "q75": per_series.quantile(0.75, axis=1)}
    return pd.DataFrame(stats).rename_axis("lag")


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
    id_col: str | None = None,
    model=None,
    df: pd.DataFrame | None = None,
    future_df: pd.DataFrame | None = None,
    n_points: int = 3,
) -> AttentionDiagnostics:
    """Padding mass, entropy and last-season share of an ``explain`` frame (with or without padding rows).

    The entropy and the last-season share describe the attention the forecast read: steps a closure forecast at zero
    (``closed_step``) are left out of them. The padding mass counts every step (masking holds or it does not).

    Given the fitted ``model`` and the history ``df`` the frame explains (and ``future_df``), also
    the occlusion ratio of ``n_points`` most against least attended points, and of the points with the largest
    against the smallest shares where the frame has them (``contribution``). ``id_col`` None: the model's, or the
    frame's first column (``explain`` puts the id first), as :func:`plot_attention_profile` reads it.
    """
    id_col = id_col or getattr(model, "id_col", None) or explanation.columns[0]
    keys = [id_col, "step"]
    if "padded" in explanation:
        padded = explanation["padded"].to_numpy()
        padded_mass = float(explanation[padded].groupby(keys)["weight"].sum().max()) if padded.any() else 0.0
    else:  # padded rows were omitted: their mass cannot be read from this frame
        padded, padded_mass = np.zeros(len(explanation), dtype=bool), float("nan")
    valid = read_rows(explanation[~padded])
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
