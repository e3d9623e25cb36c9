"""Long frames from the inference core's arrays: forecasts and attention, one row per (window, step), and the
explanation ``explain`` returns (by history point or by step)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..data.panel import Panel
from ..data.validation import restore_zone
from .account import STEP_PARTS, step_account
from .files.migration import RETIRED_COLUMNS
from .inference import Forecast

# The statsforecast baselines a backtest can score beside the model, by the name of their forecast columns
# (``evaluation.baselines`` runs them; ``plots`` draws their columns).
BASELINES = ("seasonal_naive", "auto_ets", "mstl")


def quantile_column(q: float) -> str:
    """Column name of a quantile forecast: 0.1 -> 'y_hat_q10', 0.975 -> 'y_hat_q97.5'."""
    return f"y_hat_q{round(100 * q, 6):g}"


def localise(times: np.ndarray, tz: str | None) -> pd.DatetimeIndex:
    """Naive UTC/wall timestamps back in the caller's time zone."""
    return restore_zone(pd.DatetimeIndex(times.ravel()), tz)


def target_times(panel: Panel, forecast: Forecast) -> np.ndarray:
    """(B, H) timestamps of each window's horizon."""
    horizon = forecast.quantiles.shape[1]
    cols = forecast.origins[:, None] + np.arange(1, horizon + 1)[None, :]
    return panel.timestamps(forecast.series[:, None], cols)


def forecast_frame(
    panel: Panel,
    forecast: Forecast,
    levels: tuple[float, ...],
    requested: Sequence[float] | None,
    id_col: str,
    time_col: str,
    tz: str | None,
) -> pd.DataFrame:
    """``id_col``, ``time_col``, ``y_hat`` (the median) and one ``y_hat_q..`` column per requested level."""
    values = forecast.quantiles
    horizon = values.shape[1]
    out = pd.DataFrame(
        {
            id_col: np.repeat(panel.ids[forecast.series], horizon),
            time_col: localise(target_times(panel, forecast), tz),
            "y_hat": values[:, :, levels.index(0.5)].ravel(),
        }
    )
    for q in () if requested is None else requested:
        out[quantile_column(float(q))] = values[:, :, levels.index(float(q))].ravel()
    return out


def output_columns(time_col: str) -> set[str]:
    """The columns ``predict``, ``explain`` (by point and by step) and ``backtest`` add beside the id and time columns
    (quantile columns ``y_hat_q..`` aside): an id or time column of one of these names would be overwritten."""
    added = {"y_hat", "step", "lag", "weight", "contribution", "padded", "closed_step", "cutoff", f"{time_col}_history"}
    added |= {"step_baseline", "step_covariates", "step_partners", "step_floor", *RETIRED_COLUMNS}
    return added | {part for parts in STEP_PARTS.values() for part in parts}


def check_column_names(id_col: str, time_col: str, target_col: str) -> None:
    """Refuse id, time and target columns that are not three different names, or an id or time column named as an
    output column (:func:`output_columns`); ValueError naming the parameter. Checked where a fit or a backtest starts
    (a model file written with such names still loads and forecasts as before)."""
    names = {"id_col": id_col, "time_col": time_col, "target_col": target_col}
    if not all(isinstance(name, str) for name in names.values()):
        return  # the parameter checks refuse names that are not text
    if len(set(names.values())) < len(names):
        raise ValueError(f"`id_col`, `time_col` and `target_col` must name three different columns; got {names}.")
    for parameter, other in (("id_col", "series"), ("time_col", "time")):
        name = names[parameter]
        if name in output_columns(time_col) or re.fullmatch(r"y_hat_q[0-9.]+", name):
            raise ValueError(
                f"`{parameter}`={name!r} is the name of a column the forecasts or explanations add, which would "
                f"overwrite it; rename the column, e.g. df.rename(columns={{{name!r}: {other!r}}}), and pass the new name."
            )


def attention_frame(
    panel: Panel,
    forecast: Forecast,
    id_col: str,
    time_col: str,
    tz: str | None,
    include_padding: bool = False,
    values: str | None = None,
) -> pd.DataFrame:
    """Attention of each window's horizon steps over its history, in long format (see ``Seq2SeqForecaster.explain``).

    ``values``: the model's ``attention_values``, recorded in ``attrs["attention_values"]`` where there is an
    account, so that plots say what its shares are.
    """
    weights = forecast.attention
    n, h, t = weights.shape
    series, origins = forecast.series, forecast.origins
    hist_cols = origins[:, None] + np.arange(1 - t, 1)[None, :]  # (B, T)
    hist_times = panel.timestamps(series[:, None], hist_cols)
    targets = target_times(panel, forecast)
    inside = hist_cols >= panel.first_col[series][:, None]
    w_idx, h_idx, t_idx = np.meshgrid(np.arange(n), np.arange(h), np.arange(t), indexing="ij")
    real = np.broadcast_to(inside[:, None, :], weights.shape)
    keep = np.ones(weights.shape, dtype=bool) if include_padding else real
    out = pd.DataFrame(
        {
            id_col: panel.ids[series[w_idx[keep]]],
            time_col: localise(targets[w_idx[keep], h_idx[keep]], tz),
            "step": h_idx[keep] + 1,
            f"{time_col}_history": localise(hist_times[w_idx[keep], t_idx[keep]], tz),
            "lag": (t - 1 - t_idx[keep]),
            "weight": weights[keep].astype(np.float64),
        }
    )
    account = forecast.account
    if account is not None:  # each history point's share, and the parts of each step that no point owns
        out["contribution"] = account.points[keep]
        for name in ("baseline", "covariates", "partners"):
            out[f"step_{name}"] = getattr(account, name)[w_idx[keep], h_idx[keep]]
        out["step_floor"] = account.lift[w_idx[keep], h_idx[keep]]  # what lifted a negative median to zero
        for name, value in RETIRED_COLUMNS.items():  # no longer a part of the forecast; kept for code that reads it
            out[name] = value
        out["y_hat"] = account.forecast[w_idx[keep], h_idx[keep]]  # predict's median, which the parts add up to
        if values is not None:
            out.attrs["attention_values"] = values
    out["closed_step"] = forecast.closed_steps[w_idx[keep], h_idx[keep]]  # forecast at zero by a closure: nothing read
    if include_padding:
        out["padded"] = ~real.ravel()
    return out


def explanation(
    panel: Panel, forecast: Forecast, id_col: str, time_col: str, tz: str | None, include_padding: bool, by: str, values: str
) -> pd.DataFrame:
    """``explain``'s frame of a forecast with its account: by history point (``attention_frame``) or by step
    (``account.step_account``, from the point frame with its padded rows).

    Raises:
        ValueError: ``by="step"`` without an account (``log_target``: its parts would add up to the log of the forecast).
    """
    frame = attention_frame(panel, forecast, id_col, time_col, tz, include_padding or by == "step", values)
    if by == "point":
        return frame
    if "contribution" not in frame:
        raise ValueError("No account with log_target: its parts would add up to the log of the forecast.")
    return step_account(frame, id_col, time_col, values)
