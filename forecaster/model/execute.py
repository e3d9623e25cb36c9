"""Carrying out a fit plan: from a validated frame and a :class:`~forecaster.model.plan.FitPlan` to a fitted model.

:func:`run_plan` is the one function every route into training runs (``fit``, the backtest's folds, a Dask fit that
streams its windows, data-parallel training, which pass their own member trainer, and pretraining, which passes its
corpus's training job): the panel, the network's shapes, each member's starting weights, the training job, the
members' training, the fitted state and its calibration.
It changes nothing it is given; the caller adopts the :class:`Fit` it returns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import pandas as pd

from ..data.dates import message_zone, messages_in_zone
from ..data.features import FeatureSpec, fit_features
from ..data.panel import Panel, padding_expected, refuse_short
from ..data.roles import CovariateRoles
from ..data.validation import Columns
from .calibration import HoldOut
from .closures import LEARN, closed_steps, near_misses, never_observed, resolve_closures
from .covariate_check import check_covariates, unused_note
from .covariate_screen import kept_aside_note, screen_covariates, screened_note
from .fitting import calibrated, network_config, training_job, with_blend_recorded
from .inference import history_kept, model_panel
from .members import MemberTrainer, TrainingJob, fit_members
from .network import Ensemble, NetworkConfig
from .plan import FitPlan, PanelFacts, keeping_future, plan_fit, prior_challenger, resolved
from .prior import adapted_weights, learning_rate_scales
from .resolve import FLOOR_RULES, few_negatives_note, floor_rule, partners_follow, resolve_device
from .state import FittedState, set_aside
from .training import TrainResult
from .warm_start import extend_features, extend_spec, widen_static_inputs

# Builds a fit's training job from its panel, called as ``fitting.training_job`` is: (panel, roles, network config,
# plan, device, parameters, the whole panel's training windows or None, the prior's learning-rate scales or None).
JobMaker = Callable[..., TrainingJob]


@dataclass(frozen=True)
class Fit:
    """What a fit produced: the fitted state (its plan in ``state.plan``), the trained ensemble in eval mode, the
    device it runs on, each member's training result, the training panel and the windows its training held out."""

    state: FittedState
    network: Ensemble
    device: str
    results: list[TrainResult]
    panel: Panel
    holdout: HoldOut | None = None

    @property
    def plan(self) -> FitPlan:
        return FitPlan.from_dict(self.state.plan)


def initial_weights(plan: FitPlan, previous, config: NetworkConfig, features: FeatureSpec, roles: CovariateRoles):
    """Each member's starting weights: the previous members' (a warm start, static inputs widened to new
    categories), the prior's (member k from the prior's member k, cycling when a fit asks for more), or None."""
    if plan.start == "continue":
        state, network = previous
        return [widen_static_inputs(m.state_dict(), state.features, features, roles.static) for m in network.members]
    if plan.start == "prior":
        return [adapted_weights(plan.prior_model, config, k) for k in range(plan.n_members)]
    return None


def _features(plan: FitPlan, previous, frame: pd.DataFrame, id_col: str, roles, features: FeatureSpec | None):
    """The covariate encodings: a warm start keeps the trained scalings and appends new categories."""
    if plan.start == "continue":
        known = previous[0].features
        if features is None:
            return extend_features(known, frame, id_col, roles)
        return extend_spec(known, features)  # the whole panel's encodings
    return fit_features(frame, id_col, roles) if features is None else features


def run_plan(
    plan: FitPlan,
    facts: PanelFacts,
    frame: pd.DataFrame,
    tz: str | None,
    params: dict,
    previous=None,
    train_members: MemberTrainer | None = None,
    features: FeatureSpec | None = None,
    corpus_job: JobMaker | None = None,
) -> Fit:
    """Fit on a frame that ``clean_history`` validated, as ``plan`` says; returns the fit.

    ``previous``: ``(state, network)`` of the fit a warm start continues from. ``train_members(job, seeds, initial)``
    trains the members instead of ``fit_members`` (``forecaster.scale``). ``features``: the covariate encodings of a
    whole panel of which ``frame`` is a sample (by default they come from ``frame``). ``corpus_job``: ``frame`` is a
    pretraining corpus (``forecaster.pretraining``), whose short series are padded on purpose (none is refused), and
    this builds its training job instead of ``fitting.training_job``.

    A plan with ``prior_check`` (future-known covariates declared on a panel the prior would serve without them) first
    runs the prior as it is (``plan.prior_challenger``: no training step) on the same frame; only where the prior's
    held-out errors follow a covariate (``model.covariate_check``) is the plan itself run. The fit returned holds the
    check's figures in its plan, and a note where the covariates are not read.

    A plan with ``screen`` (future-known covariates declared on a fit from scratch; after the prior check, where that
    sends the fit to train) first screens the history (``model.covariate_screen``): the covariates that move nothing
    there and that no closure reads are set aside, the fit run is the fit with only the others declared, and its plan
    records those set aside. A fit given the whole panel's encodings (a sample of a distributed panel) or a corpus
    reads the covariates as declared.
    """
    if tz and message_zone() != tz:  # the frame is naive: its messages name times in the data's zone
        with messages_in_zone(tz):
            return run_plan(plan, facts, frame, tz, params, previous, train_members, features, corpus_job)
    given = (previous, train_members, features, corpus_job)
    if plan.start == "continue":
        aside = tuple(name for name in set_aside(previous[0]) if name in facts.roles.future)
        if aside:
            return _continued_aside(plan, facts, frame, tz, params, given, aside)
    screens = plan.screen and features is None and corpus_job is None

    def trained() -> Fit:
        return (
            _screened(plan, facts, frame, tz, params, train_members) if screens else _run(plan, facts, frame, tz, params, *given)
        )

    if not plan.prior_check:
        return trained()
    prior = _run(prior_challenger(params, facts), facts, frame, tz, params, None, None, features, None)
    check = check_covariates(prior, params)
    if check is None or check.covariates_read:  # None: no evidence either way, the covariates are read as declared
        fit = trained()
        return fit if check is None else _recorded(fit, replace(fit.plan, check={**check.to_dict(), **(fit.plan.check or {})}))
    note = unused_note(check.to_dict(), list(facts.roles.future), prior.state.closed_when)
    return _recorded(prior, replace(prior.plan, prior_check=True, check=check.to_dict(), notes=(*prior.plan.notes, note)))


def _screened(plan: FitPlan, facts: PanelFacts, frame: pd.DataFrame, tz, params: dict, train_members) -> Fit:
    """``plan`` run where the screen of its history finds every covariate moving the target (a covariate without
    evidence either way, or with a closure learnt from it, counts as moving it); else the plan of the same fit with
    only the covariates that do, run on the frame without the others. The screen's figures are recorded either way."""
    columns, roles = Columns.from_params(params), facts.roles
    given = (None, train_members, None, None)
    closing = resolve_closures(params["closed_when"], frame, columns.target, roles.future)
    features = fit_features(frame, columns.id, roles)
    units = dict(plan.units)
    panel = model_panel(frame, columns, roles, features, facts.offset, params["horizon"], units, fill_gaps=params["fill_gaps"])
    closed = closed_steps(closing, panel.future_names, panel.future, features.numeric) if closing else None
    result = screen_covariates(panel, units["season_length"], closed)
    result = None if result is None else replace(result, closing=tuple(closing))
    if result is None or not result.unread:  # the fit reads every covariate: the screen's panel is its panel
        fit = _run(plan, facts, frame, tz, params, None, train_members, features, None, panel=panel)
        return fit if result is None else _recorded(fit, replace(fit.plan, check=result.to_dict()))
    unread = result.unread
    kept = tuple(name for name in roles.future if name not in unread)
    kept_params, kept_facts = keeping_future(params, facts, kept)
    fit = _run(plan_fit(kept_params, kept_facts), kept_facts, frame.drop(columns=list(unread)), tz, kept_params, *given)
    notes = (*dict.fromkeys((*plan.notes, *fit.plan.notes)), screened_note(result, list(roles.future)))
    screened = dict(screen=True, covariates_read=bool(kept), unread=unread, check=result.to_dict())
    return _recorded(fit, replace(fit.plan, **screened, notes=notes))


def _continued_aside(plan: FitPlan, facts: PanelFacts, frame: pd.DataFrame, tz, params: dict, given, aside) -> Fit:
    """A warm start from a fit whose screen set covariates ``aside``: they stay aside (the weights it continues from
    never read them), the plan records them again, and its notes say so."""
    kept = tuple(name for name in facts.roles.future if name not in aside)
    kept_params, kept_facts = keeping_future(params, facts, kept)
    fit = _run(plan, kept_facts, frame.drop(columns=list(aside)), tz, kept_params, *given)
    notes = (*fit.plan.notes, kept_aside_note(aside))
    return _recorded(fit, replace(fit.plan, unread=aside, covariates_read=bool(kept), notes=notes))


def _recorded(fit: Fit, plan: FitPlan) -> Fit:
    """``fit`` with ``plan`` as the plan its state saves."""
    return replace(fit, state=replace(fit.state, plan=plan.to_dict()))


def _run(
    plan: FitPlan, facts: PanelFacts, frame: pd.DataFrame, tz: str | None, params: dict, *given, panel: Panel | None = None
) -> Fit:
    """One plan carried out; ``given``: ``run_plan``'s ``previous``, ``train_members``, ``features``, ``corpus_job``;
    ``panel``: the panel of ``frame`` with ``features``, where the caller built it already (the screen)."""
    previous, train_members, features, corpus_job = given
    columns, roles, horizon = Columns.from_params(params), facts.roles, params["horizon"]
    units = dict(plan.units)
    features = _features(plan, previous, frame, columns.id, roles, features)
    if panel is None:
        with padding_expected(plan.start == "prior" or corpus_job is not None):
            panel = model_panel(frame, columns, roles, features, facts.offset, horizon, units, fill_gaps=params["fill_gaps"])
    if plan.trains and corpus_job is None:  # a model that does not train needs no training window
        refuse_short(panel.ids, panel.length, horizon)
    config = network_config(panel, roles, features, plan.quantiles, units["input_size"], params)
    device = resolve_device(params["device"])
    initial = initial_weights(plan, previous, config, features, roles)
    job = None
    if not plan.trains:  # the prior as it is: no training, no held-out windows, no calibration
        results = [TrainResult(state_dict=weights, best_step=0) for weights in initial]
    else:
        scales = None
        if plan.start == "prior":
            scales = learning_rate_scales(plan.prior_model, config, plan.prior_rate_share)
        job = (corpus_job or training_job)(panel, roles, config, plan, device, params, facts.n_windows, scales)
        job = replace(job, features=features)
        plan = resolved(plan, job)
        seeds = list(plan.seeds)
        if train_members is None:
            results = fit_members(job, seeds, params["n_jobs"], initial)
        else:
            results = train_members(job, seeds, initial)
    network = Ensemble(config, len(results)).to(device)
    for member, result in zip(network.members, results, strict=True):
        member.load_state_dict(result.state_dict)
    network.eval()
    if isinstance(params["closed_when"], str) and params["closed_when"] == LEARN and roles.future:
        misses = near_misses(frame, columns.target, roles.future, columns.id, columns.time, tz)
        misses += never_observed(frame, columns.target, roles.future, columns.id, columns.time, tz)
        plan = replace(plan, notes=(*plan.notes, *misses)) if misses else plan
    if floor_rule(params) == FLOOR_RULES[0]:  # the default floor, which a few negative targets take from a series
        negatives = few_negatives_note(frame, columns.id, columns.time, columns.target, tz)
        plan = replace(plan, notes=(*plan.notes, negatives)) if negatives else plan
    state = new_state(frame, tz, panel, features, plan, config, len(results), params)
    state = state if job is None else calibrated(network, state, panel, job.holdout, params, device, plan.covariates_read)
    state = with_blend_recorded(state, params)
    return Fit(state, network, device, results, panel, None if job is None else job.holdout)


def new_state(frame, tz, panel: Panel, features, plan: FitPlan, config, n_members: int, params: dict) -> FittedState:
    """The fitted state of a fit on ``frame`` (before calibration), with the history tail ``predict`` reads."""
    columns = Columns.from_params(params)
    by_series = frame.groupby(columns.id, sort=False, observed=True)
    units = plan.units
    return FittedState(
        freq=plan.freq,
        roles=CovariateRoles.from_params(params),
        features=features,
        quantiles=plan.quantiles,
        network=config,
        n_members=n_members,
        tz=tz,
        history=by_series.tail(kept_history(units, panel, partners_follow(params))).reset_index(drop=True),
        training_end=by_series[columns.time].max(),
        scaler=params["scaler"],
        warm_starts=plan.warm_starts,
        init=plan.init,
        plan=plan.to_dict(),
        nonnegative=floor_rule(params),
        partners_follow_covariates=partners_follow(params),
        closed_when=resolve_closures(
            params["closed_when"], frame, columns.target, CovariateRoles.from_params(params).future, features.zero_tallies
        ),
        **units,
    )


def kept_history(units: dict, panel: Panel, follow: bool) -> int:
    """Periods per series a fitted state keeps for ``predict()`` without data: what a forecast reads (``history_kept``),
    and a season more where the partners follow the covariates (their reference reads the season before each step)."""
    kept = history_kept(units["input_size"], panel.decomposition, units["partner_week"])
    return max(kept, units["season_length"]) if follow else kept
