"""Is the attention map faithful? An occlusion check: do the points it attends to move the forecast most?

For each series, the ``n`` history points with the most attention (weight summed over the
horizon steps) are replaced by the series' mean and the series is forecast again; the same is
done for the ``n`` observed points with the least attention. Each series' mean absolute change
of the forecast is divided by the mean absolute value of its history, so that every series
counts alike whatever its units; the ratio of the two means over series is the *occlusion
ratio*: well above 1 when the map points at what drives the forecast, below 1 when it points
away from it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .params import check_arguments


@dataclass(frozen=True)
class Occlusion:
    """Mean relative change of the forecast when the most / least attended points are replaced.

    Each series' mean absolute change is relative to the mean absolute value of its history.
    """

    most_attended: float
    least_attended: float
    n_series: int
    n_points: int

    @property
    def ratio(self) -> float:
        """``most_attended / least_attended``; inf when occluding the least attended points changes nothing."""
        if self.least_attended == 0.0:
            return float("inf") if self.most_attended > 0.0 else float("nan")
        return self.most_attended / self.least_attended


def _occluded(df: pd.DataFrame, points: pd.DataFrame, id_col: str, time_col: str, target_col: str) -> pd.DataFrame:
    """``df`` with the target at ``points`` (id, time) replaced by each series' mean."""
    means = df.groupby(id_col, sort=False, observed=True)[target_col].mean()
    keys = pd.MultiIndex.from_frame(df[[id_col, time_col]])
    hit = keys.isin(pd.MultiIndex.from_frame(points[[id_col, time_col]]))
    out = df.copy()
    if not pd.api.types.is_float_dtype(out[target_col]):  # a mean goes into an integer column of counts
        out[target_col] = out[target_col].astype(np.float64)
    out.loc[hit, target_col] = df.loc[hit, id_col].map(means).to_numpy()
    return out


def _check_window(n_points: int, input_size: int) -> None:
    """Refuse more points than an encoder window holds: the most and the least attended ``n_points`` must not overlap.

    Raises:
        ValueError: ``2 * n_points`` exceeds ``input_size``, naming both.
    """
    if 2 * n_points > input_size:
        raise ValueError(
            f"`n_points`={n_points}: the check occludes the {n_points} most and the {n_points} least attended points of "
            f"each window, but the model's windows hold input_size={input_size} periods; use n_points <= {input_size // 2}."
        )


# Series checked at most (a fixed random sample beyond it): the check makes three forecasts.
MAX_SERIES = 500


# What the points can be ranked by: the attention weight, or the absolute share of the forecast.
RANKINGS = ("weight", "contribution")


def occlusion(
    model,
    df: pd.DataFrame,
    future_df: pd.DataFrame | None = None,
    n_points: int = 3,
    max_series: int | None = MAX_SERIES,
    rank_by: str = "weight",
) -> Occlusion:
    """The occlusion check of a fitted model's attention (or shares) on the history ``df``, forecasts from each end.

    ``rank_by``: ``"weight"`` ranks the points by attention summed over the horizon steps, ``"contribution"``
    by the absolute share of the forecast summed over them (needs an account: not with ``log_target``).
    Only observed history points inside the encoder window compete; three forecasts are made
    (as is, top points occluded, bottom points occluded), each for all series at once, on
    at most ``max_series`` series (a fixed random sample; None: all).
    """
    return occlusions(model, df, future_df, n_points, max_series, (rank_by,))[rank_by]


def occlusions(
    model,
    df: pd.DataFrame,
    future_df: pd.DataFrame | None = None,
    n_points: int = 3,
    max_series: int | None = MAX_SERIES,
    rank_by: tuple[str, ...] = RANKINGS,
) -> dict[str, Occlusion]:
    """:func:`occlusion` for several rankings, sharing the forecast as is and the explanation.

    Raises:
        ValueError: an unknown ranking, or ``"contribution"`` for a model without an account (``log_target``).
    """
    unknown = [r for r in rank_by if r not in RANKINGS]
    if unknown:
        raise ValueError(f"rank_by must be among {RANKINGS}; got {unknown}.")
    check_arguments(n_points=n_points, max_series=max_series)
    id_col, time_col, target_col = model.id_col, model.time_col, model.target_col
    ids = pd.unique(df[id_col])
    if max_series is not None and len(ids) > max_series:
        keep = np.random.default_rng(0).choice(ids, max_series, replace=False)
        df = df[df[id_col].isin(keep)]
        future_df = None if future_df is None else future_df[future_df[id_col].isin(keep)]
    history_col = f"{time_col}_history"
    explanation = model.explain(df=df, future_df=future_df)
    _check_window(n_points, model.input_size_)
    if "contribution" in rank_by and "contribution" not in explanation:
        raise ValueError("rank_by='contribution' needs explain()'s shares; a model with log_target has none.")
    base = model.predict(df=df, future_df=future_df)
    observed = df.loc[df[target_col].notna(), [id_col, time_col]]
    result = {}
    for key in rank_by:
        score = explanation[key].abs() if key == "contribution" else explanation[key]
        totals = explanation.assign(score=score).groupby([id_col, history_col], sort=False, observed=True)["score"].sum()
        totals = totals.reset_index().rename(columns={history_col: time_col})
        totals = totals.merge(observed, on=[id_col, time_col], how="inner")
        totals = totals[totals.groupby(id_col, observed=True)[time_col].transform("size") >= 2 * n_points]
        ranked = totals.sort_values([id_col, "score"], ascending=[True, False], kind="stable")
        most = ranked.groupby(id_col, sort=False, observed=True).head(n_points)
        least = ranked.groupby(id_col, sort=False, observed=True).tail(n_points)
        series = most[id_col].unique()
        size = df[target_col].abs().groupby(df[id_col].to_numpy()).mean().reindex(series)
        changes = []
        for points in (most, least):
            moved = model.predict(df=_occluded(df, points, id_col, time_col, target_col), future_df=future_df)
            delta = (moved["y_hat"] - base["y_hat"]).abs().groupby(base[id_col].to_numpy()).mean().reindex(series)
            changes.append(float((delta / size.where(size > 0)).mean()))
        result[key] = Occlusion(changes[0], changes[1], int(len(series)), n_points)
    return result
