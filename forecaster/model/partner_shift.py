"""What the future-known covariates change in the partners' forecasts: the network's estimate, added to them.

The partners (Theta, Holt-Winters) cannot see covariates. A partner forecasts each step from the same phase of its
last seasons before the origin, so it forecasts as if the covariates at that step held the values they had there.
Where they do not (a public holiday on a weekday, a promotion, a closed day), a fixed blend pulls the forecast back
towards what the history looked like under other conditions: on the half-hourly electricity study the partners
forecast Christmas Day from ordinary days (``benchmarks/history/electricity-study.md``).

The network can tell what the covariates change. So each window is run a second time with the declared future-known
covariates of every step replaced by their *reference*: their values at the latest period of the same phase up to the
origin (the window's partner season, the day or the week; the origin itself where the season is 1). The difference
between the network's medians with the covariates as they are and at the reference is the covariates' effect on that
step, and each partner's forecast is shifted by it before the blend, which becomes

    network + sum_k w_k * (partner_k - network at the reference)

A covariate that carries nothing moves the network by nothing and leaves the partners where they were; a holiday the
network learnt to forecast low moves the partners down with it. Calendar features and the decomposition inputs are
not replaced: the partners' seasons carry them. The latest period rather than a mean over the partner's seasons:
the partners' levels follow the last periods, and a mean of a 0/1 flag is a value the network never saw (on the
suite's half-hourly electricity panel a mean over the partners' days cost 24%; ``benchmarks/history/0.16.0.md``).

Reads no column after a window's origin besides the future-known covariates of its horizon (which the decoder reads
anyway).
"""

from __future__ import annotations

import numpy as np
import torch

from ..data.panel import Panel
from ..data.windows import assemble
from ..partners.season import prefers_week
from .network import Ensemble
from .state import FittedState, reads_covariates
from .training import to_tensors

# Windows per forward pass: bounds memory on large panels without slowing small ones (``inference`` reads it too).
CHUNK = 2048


def partner_seasons(
    target: np.ndarray, panel: Panel, series: np.ndarray, origins: np.ndarray, season_length: int, week: int
) -> np.ndarray:
    """Each window's partner season (B,): the day or the week, as ``partners.blend.partner_distributions`` chooses."""
    seasons = np.full(len(series), max(season_length, 1), dtype=np.int64)
    if week > 0 and len(series):
        seasons[prefers_week(target, panel.first_col, series, origins, season_length, week)] = week
    return seasons


def reference_covariates(panel: Panel, series: np.ndarray, origins: np.ndarray, horizon: int, seasons: np.ndarray) -> np.ndarray:
    """(B, H, Cf) each step's future-known covariates as the partners saw them: their values at the latest period up to
    the origin of the same phase of the window's partner season ``seasons[b]`` (the origin itself without a season).

    A step whose phase has no such period since the series' first column keeps its own values.
    """
    steps = np.arange(1, horizon + 1)[None, :]
    m = seasons[:, None]
    cols = origins[:, None] + steps
    latest = cols - m * -(-steps // m)  # the same phase, one or more seasons back, at or before the origin
    inside = latest >= panel.first_col[series][:, None]
    rows = series[:, None]
    return np.where(inside[..., None], panel.future[rows, np.maximum(latest, 0)], panel.future[rows, cols])


def covariate_shift(
    network: Ensemble,
    state: FittedState,
    panel: Panel,
    target: np.ndarray,
    series: np.ndarray,
    origins: np.ndarray,
    medians: np.ndarray,
    device: str,
) -> np.ndarray:
    """(B, H) the network's median (``medians``, target units) minus its median with the future-known covariates at
    their reference (:func:`reference_covariates`): what the covariates change that the partners cannot see. Exactly 0
    on the steps whose covariates equal their reference (``medians`` may come from a sum of parts, whose float rounding
    differs from a forward pass).

    Raises:
        FloatingPointError: the network produced a non-finite forecast at the reference.
    """
    horizon = state.network.horizon
    shift = np.zeros((len(series), horizon))
    n_future = len(state.roles.future)
    if n_future == 0 or len(series) == 0:
        return shift
    seasons = partner_seasons(target, panel, series, origins, state.season_length, state.partner_week)
    for start in range(0, len(series), CHUNK):
        part = slice(start, start + CHUNK)
        batch = assemble(panel, state.roles, series[part], origins[part], state.input_size, horizon, state.scaler, False)
        reference = reference_covariates(panel, series[part], origins[part], horizon, seasons[part])
        same = (reference == batch.future_known[:, :, :n_future]).all(axis=2)  # (b, H): nothing for the partners to miss
        batch.future_known[:, :, :n_future] = reference
        with torch.inference_mode():
            scaled, _, _ = network.run(**to_tensors(batch, device))
        values = scaled[..., state.median_index].double().cpu().numpy() * batch.scale[:, None] + batch.loc[:, None]
        at_reference = np.expm1(values) if state.log_target else values
        shift[part] = np.where(same, 0.0, medians[part] - at_reference)  # exactly 0 where the inputs are the same
    if not np.isfinite(shift).all():
        raise FloatingPointError("The network produced non-finite forecasts; please report this with the data.")
    return shift


def partner_shift(
    network: Ensemble,
    state: FittedState,
    panel: Panel,
    target: np.ndarray,
    series: np.ndarray,
    origins: np.ndarray,
    medians: np.ndarray,
    device: str,
    blended: bool,
) -> np.ndarray | None:
    """:func:`covariate_shift` where the fit's partners follow the covariates and ``blended`` (a partner may take a
    weight); None elsewhere, and the partners forecast as they are."""
    if not (follows_covariates(state) and blended):
        return None
    return covariate_shift(network, state, panel, target, series, origins, medians, device)


def follows_covariates(state: FittedState) -> bool:
    """Whether the fit's partners take what the covariates change: where it resolved ``partners_follow_covariates``
    so and its network reads the covariates."""
    return state.partners_follow_covariates and bool(state.roles.future) and reads_covariates(state)
