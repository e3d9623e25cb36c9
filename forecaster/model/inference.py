"""The inference core: forecasts and attention of any windows (series, origin) of a panel, in one pass.

Origins are data. ``predict`` passes each series' end; the backtest passes each fold's cutoffs (without refits and
with an expanding window, every fold's cutoffs of one panel). Either way the same function runs the network once per window,
maps its outputs back to target units, blends in the statistical partners fitted on
the same history up to the same origin, and returns attention from the same pass.
Nothing here reads a column after a window's origin: the encoder through
``windows.encoder_block``, the partners through ``partner_distributions``.
"""

from __future__ import annotations

import contextlib
import hashlib
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import torch

from ..callers import user_stacklevel
from ..data.decomposition import DecompositionTable, history_needed
from ..data.features import FeatureSpec
from ..data.frames import shown_ids
from ..data.panel import Panel, build_panel, log_target, with_decomposition
from ..data.roles import CovariateRoles
from ..data.validation import Columns
from ..data.windows import assemble, observed_cumsum
from ..partners.blend import PARTNERS, blend_quantiles, mix_offsets, partner_distributions
from ..partners.season import partner_history
from .account import Account, network_account
from .closures import closed_steps
from .constant_series import constant_steps, measurements
from .intervals import apply_factors
from .network import Ensemble
from .partner_shift import CHUNK, partner_shift
from .state import FittedState, reads_covariates
from .training import to_tensors


@dataclass(frozen=True)
class Forecast:
    """What the core returns for B windows."""

    series: np.ndarray  # (B,) panel row of each window
    origins: np.ndarray  # (B,) origin column of each window
    quantiles: np.ndarray  # (B, H, Q) in target units, partners blended in; Q as ``FittedState.quantiles``
    attention: np.ndarray  # (B, H, T) attention weights over the encoder window
    account: Account | None = None  # the median in parts that add up to it (None with log_target)
    closed: np.ndarray | None = None  # (B, H) the steps a closure forecast at zero (``closed_when``); None: none

    @property
    def closed_steps(self) -> np.ndarray:
        """(B, H) bool: the steps a closure forecast at zero, every level (all False without closures)."""
        return np.zeros(self.quantiles.shape[:2], dtype=bool) if self.closed is None else self.closed


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run with ``n`` torch threads (None: leave torch's setting), restoring the previous count."""
    previous = torch.get_num_threads()
    if n:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def history_kept(input_size: int, decomposition: DecompositionTable | None, partner_week: int = 0) -> int:
    """Periods per series up to an origin that a forecast reads: the encoder window, what the decomposition reads and
    what weekly partners read (``partners.season``)."""
    kept = input_size if decomposition is None else max(input_size, history_needed(decomposition))
    return max(kept, partner_history(partner_week))


def model_panel(
    frame: pd.DataFrame,
    columns: Columns,
    roles: CovariateRoles,
    features: FeatureSpec,
    offset: pd.DateOffset,
    horizon: int,
    units: dict,
    future: pd.DataFrame | None = None,
    fill_gaps: bool = False,
) -> Panel:
    """A validated frame as a panel in the units the network models.

    ``units`` holds ``input_size``, ``season_length``, ``log_target``, ``seasonal_profile`` and
    ``trend_line`` (as a :class:`FittedState` records them).
    """
    panel = build_panel(frame, columns, roles, features, offset, units["input_size"], horizon, future, fill_gaps)
    if units["log_target"]:
        panel = log_target(panel, columns.target)
    return with_decomposition(panel, units["season_length"], units["seasonal_profile"], units["trend_line"])


def state_units(state: FittedState) -> dict:
    """The ``units`` argument of :func:`model_panel` for a fitted state."""
    names = ("input_size", "season_length", "log_target", "seasonal_profile", "trend_line")
    return {name: getattr(state, name) for name in names}


def target_values(panel: Panel, state: FittedState) -> np.ndarray:
    """The panel's targets in their own units (the network models ``log1p`` of them with ``log_target``)."""
    return np.expm1(panel.y) if state.log_target else panel.y


def accountable(state: FittedState) -> bool:
    """Whether forecasts of this model come with an account (see :mod:`forecaster.model.account`)."""
    return not state.log_target


def exact_shares(state: FittedState) -> bool:
    """Whether the account gives every attended point its exact share (``values="observations"``)."""
    return state.network.values == "observations"


def run_network(
    network: Ensemble,
    state: FittedState,
    panel: Panel,
    series: np.ndarray,
    origins: np.ndarray,
    device: str,
    account: bool = False,
) -> tuple[np.ndarray, np.ndarray, Account | None]:
    """The network's quantiles in target units (B, H, Q), its attention (B, H, T) and its account, in chunks.

    The observation design always computes its account (its forecast is the sum of the parts); the state
    design only with ``account``, since its forecast does not need it (``explain`` asks for it).
    """
    outputs, weights, accounts = [], [], []
    horizon = state.network.horizon
    with_parts = accountable(state) and (exact_shares(state) or account)
    shares = with_parts and not exact_shares(state)  # the state design's head, split over the points by gradients
    for start in range(0, len(series), CHUNK):
        part = slice(start, start + CHUNK)
        batch = assemble(panel, state.roles, series[part], origins[part], state.input_size, horizon, state.scaler, False)
        with torch.no_grad() if shares else torch.inference_mode():  # the shares take gradients of the head
            scaled, attention, parts = network.run(with_parts=with_parts, shares=shares, **to_tensors(batch, device))
        values = scaled.double().cpu().numpy() * batch.scale[:, None, None] + batch.loc[:, None, None]
        attention = attention.cpu().numpy()
        if with_parts:
            cols = origins[part][:, None] + np.arange(1 - state.input_size, 1)[None, :]
            window = np.where(batch.past_observed > 0, panel.y[series[part][:, None], np.maximum(cols, 0)], np.nan)
            account = network_account(parts, attention, window, batch.loc, batch.scale, state.scaler)
            if exact_shares(state):  # the forecast is the sum of its parts
                values += (account.total - values[:, :, state.median_index])[..., None]
            else:  # the forward pass stays the forecast; the parts' float rounding goes to the baseline
                account = account.settled(values[:, :, state.median_index])
            accounts.append(account)
        outputs.append(np.expm1(values) if state.log_target else values)
        weights.append(attention)
    if not outputs:
        return np.zeros((0, horizon, len(state.quantiles))), np.zeros((0, horizon, state.input_size), dtype=np.float32), None
    account = Account.concatenate(accounts) if accounts else None
    return np.concatenate(outputs), np.concatenate(weights), account


def blend_partners(
    values: np.ndarray,
    state: FittedState,
    panel: Panel,
    series: np.ndarray,
    origins: np.ndarray,
    weights: dict[str, float],
    account: Account | None = None,
    shift: np.ndarray | None = None,
) -> tuple[np.ndarray, Account | None]:
    """Network quantiles (B, H, Q) combined with the statistical partners' forecasts from the same origins.

    With the network's ``account``, also the account of the blended forecast, whose total is then the median.
    ``shift`` (B, H): what the future-known covariates change that the partners cannot see
    (``model.partner_shift``), added to each partner's forecast.
    """
    active = {name: weight for name, weight in weights.items() if weight > 0.0}
    if not active or len(series) == 0:
        return values, account
    fits = [PARTNERS[name].fit for name in active]
    history = history_kept(state.input_size, panel.decomposition)
    horizon = values.shape[1]
    shaped = state.calibration is not None and state.calibration.shape > 0.0
    distributions = partner_distributions(
        fits,
        target_values(panel, state),
        panel.first_col,
        origins,
        horizon,
        state.season_length,
        history,
        series=series,
        week=state.partner_week,
    )
    partners = [p.mean for p in distributions]
    if shift is not None:
        partners = [p + shift for p in partners]
    blended = blend_quantiles(values, partners, list(active.values()), state.median_index)
    if shaped:
        blended = mix_offsets(
            blended, distributions, list(active.values()), state.median_index, state.quantiles, state.calibration.shape
        )
    if account is None:
        return blended, None
    shares = [w * np.isfinite(p) for p, w in zip(partners, active.values(), strict=True)]
    weighted = sum(np.where(np.isfinite(p), w * p, 0.0) for p, w in zip(partners, active.values(), strict=True))
    network_covariates = account.covariates
    account = account.share(1.0 - sum(shares), weighted)
    if shift is not None:
        # The partners moved by what the covariates change against their reference. The covariates' part stays what
        # it means without the shift (the network's median against the one with the covariates at their training
        # mean; with "observations" through the head only, their effect on the attention weights being in the
        # points' shares), so it takes the network's whole covariates part; the partners keep their forecast at the
        # covariates' mean.
        moved = sum(shares) * network_covariates
        account = replace(account, partners=account.partners - moved, covariates=account.covariates + moved)
    if exact_shares(state):
        blended += (account.total - blended[:, :, state.median_index])[..., None]  # the median is the sum of its parts
    else:
        account = account.settled(blended[:, :, state.median_index])
    return blended, account


def forecast_windows(
    network: Ensemble,
    state: FittedState,
    panel: Panel,
    series: np.ndarray,
    origins: np.ndarray,
    blend_weights: dict[str, float],
    device: str = "cpu",
    num_threads: int | None = None,
    account: bool = False,
) -> Forecast:
    """Forecast windows (``series[b]``, ``origins[b]``) of ``panel``: quantiles and attention from one forward pass.

    With ``account``, also the account of the median (:mod:`forecaster.model.account`) where the model has one;
    the observation design always has it.

    Raises:
        FloatingPointError: the network produced a non-finite forecast.
    """
    series = np.asarray(series, dtype=np.int64)
    origins = np.broadcast_to(np.asarray(origins, dtype=np.int64), series.shape).copy()
    seen = observed_cumsum(panel)  # one pass over the panel for both checks below
    warn_empty_windows(panel, seen, series, origins, state.input_size)
    with torch_threads(num_threads):
        values, attention, parts = run_network(network, state, panel, series, origins, device, account)
    if not np.isfinite(values).all():
        raise FloatingPointError("The network produced non-finite forecasts; please report this with the data.")
    blended = any(w > 0.0 for w in blend_weights.values())
    with torch_threads(num_threads):
        medians = values[:, :, state.median_index]
        shift = partner_shift(network, state, panel, target_values(panel, state), series, origins, medians, device, blended)
    values, parts = blend_partners(values, state, panel, series, origins, blend_weights, parts, shift)
    if state.calibration is not None:
        values = apply_factors(values, state.calibration.factors, state.median_index)
    measured = measurements(panel.future_names, state.features) if state.roles.future and reads_covariates(state) else None
    steps, level = constant_steps(panel, target_values(panel, state), seen, series, origins, values.shape[1], measured)
    if steps.any():
        values = np.where(steps[:, :, None], level[:, None, None], values)
        parts = None if parts is None else parts.constant(steps, level)
    values, parts = floored(values, parts, state, panel, series, origins)
    values, parts, shut = closed(values, parts, state, panel, series, origins)
    parts = None if parts is None else parts.of(values[:, :, state.median_index])  # explain's y_hat: predict's own
    return Forecast(series, origins, values, attention, parts, shut)


def closed(values: np.ndarray, parts, state: FittedState, panel: Panel, series: np.ndarray, origins: np.ndarray):
    """Quantiles (B, H, Q) at zero on the steps the fit's closures mark closed (``model.closures``), the account with
    every part of those steps at zero (the closure, not the history, made them), and those steps (B, H; None: none)."""
    if not state.closed_when or len(series) == 0:
        return values, parts, None
    cols = origins[:, None] + np.arange(1, values.shape[1] + 1)[None, :]
    shut = closed_steps(state.closed_when, panel.future_names, panel.future[series[:, None], cols], state.features.numeric)
    if not shut.any():
        return values, parts, None
    values = np.where(shut[:, :, None], 0.0, values)
    return values, None if parts is None else parts.closed(shut), shut


def floored(values: np.ndarray, parts, state: FittedState, panel: Panel, series: np.ndarray, origins: np.ndarray):
    """Quantiles (B, H, Q) floored at zero where the fit's ``nonnegative`` rule says so, and the account with the lift.

    "series never negative": each window whose series has no negative observed target up to its origin (so the
    history a forecast reads, and nothing after it, decides); "every series": every window; "none": no window. Taking
    the maximum with zero keeps the quantiles ordered.
    """
    if state.nonnegative == "none" or len(series) == 0:
        return values, parts
    rows = np.ones(len(series), dtype=bool)
    if state.nonnegative == "series never negative":
        rows_of, at = np.unique(series, return_inverse=True)  # only the windows' series, once each
        y = target_values(panel, state)[rows_of]
        negative = np.cumsum(np.isfinite(y) & (y < 0), axis=1)  # negative observations up to each column
        rows = negative[at, origins] == 0
    lifted = np.where(rows[:, None, None], np.maximum(values, 0.0), values)
    lift = lifted[:, :, state.median_index] - values[:, :, state.median_index]  # exactly 0 where the median stays
    if parts is not None and lift.any():
        parts = parts.floored(lift)
    return lifted, parts


class EmptyWindowWarning(UserWarning):
    """A forecast whose encoder window holds no observed target: it comes from the window's padding and the partners."""


def warn_empty_windows(panel: Panel, seen: np.ndarray, series: np.ndarray, origins: np.ndarray, input_size: int) -> None:
    """Warn, naming the series and origins, where a window's ``input_size`` periods up to its origin are all missing.

    The network then reads nothing of the series (a 48-hour outage with ``input_size=48`` was forecast at about 97
    where its level was about 340, with a tight interval); only the partners, which read further back, know its level.
    ``seen``: the panel's ``observed_cumsum``.
    """
    if len(series) == 0:
        return
    inside = seen[series, origins + 1] - seen[series, np.maximum(origins + 1 - input_size, 0)]
    empty = inside == 0
    if empty.any():
        ids = list(pd.unique(panel.ids[series[empty]]))
        when = pd.DatetimeIndex(panel.timestamps(series[empty][:1], origins[empty][:1]))[0]
        warnings.warn(
            f"{len(ids)} series have no observed target in the {input_size} periods up to their origin "
            f"({shown_ids(ids)}; e.g. origin {when}): the network reads nothing of them there and their forecast "
            "does not follow their level. Fill the gap, lower `input_size`, or forecast from an earlier origin.",
            EmptyWindowWarning,
            stacklevel=user_stacklevel(),
        )


def panel_digest(panel: Panel) -> str:
    """A fingerprint of everything in a panel that a forecast reads, to recognise the same inputs again."""
    digest = hashlib.blake2b(digest_size=16)
    for array in (panel.y, panel.past, panel.future, panel.static, panel.end, panel.length, panel.calendar):
        digest.update(np.ascontiguousarray(array).view(np.uint8).ravel().data)
    digest.update(pd.util.hash_array(np.asarray(panel.ids, dtype=object)).tobytes())
    digest.update(str((panel.grid[0], panel.grid.freqstr, len(panel.grid), panel.pad, panel.horizon)).encode())
    return digest.hexdigest()
