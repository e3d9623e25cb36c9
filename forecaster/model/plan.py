"""The fit plan: where a fit starts, how long it trains, at what rates, with how many members, what it calibrates.

:func:`plan_fit` is the one place that decides it, from the estimator's parameters, facts about the panel and what a
previous fit left; nothing else reads ``init``, ``warm_start`` or ``max_steps`` to choose how a fit starts.
``forecaster.model.execute.run_plan`` carries a plan out. The plan decides the step budget's policy; its steps and
early stopping are resolved against the panel's training windows when the plan is run, and the plan the fitted
model keeps (``Seq2SeqForecaster.fit_plan_``, saved with the model file) holds them resolved.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

import pandas as pd

from ..data.dates import messages_in_zone
from ..data.frames import shown_ids
from ..data.frequency import infer_offset, normalise_freq
from ..data.roles import CovariateRoles, LeakageError
from ..data.validation import Columns
from .budget import (
    FINE_TUNE_LEARNING_RATE_SHARE,
    STEP_CAP,
    auto_prior_steps,
    covariate_steps,
    default_max_steps,
    fine_tune_steps,
    step_cap,
    warm_start_steps,
)
from .params import needs_calibration
from .prior import AUTO_PRIOR_MAX_ROWS, Prior, PriorUnavailableError, auto_prior, family_of, frame_windows, prior_for
from .prior_corpus import seen_past_end
from .resolve import member_count, resolve_units, training_quantiles
from .state import PLAN_STARTS, set_aside
from .warm_start import architecture_changed, incompatibility

# Where a fit starts -> the word the fitted state records for it (``FittedState.init``, the estimator's ``init_``).
STARTS = dict(zip(PLAN_STARTS, ("scratch", "pretrained", "warm start"), strict=True))
# The step budget of a fit whose ``max_steps`` is None, by policy (steps from the training windows, the batch size and
# the step cap).
BUDGETS: dict[str, Callable[..., int]] = {
    "default": default_max_steps,
    "covariates": covariate_steps,
    "warm start": warm_start_steps,
    "fine-tune": fine_tune_steps,
    "prior as it is": auto_prior_steps,
}
# The other policies of ``PLAN_BUDGETS``: ``"given"`` (``max_steps`` as given) and ``"none"`` (``max_steps=0``).


@dataclass(frozen=True)
class PanelFacts:
    """What a plan needs to know of the panel a fit trains on.

    Attributes:
        offset: its frequency.
        roles: its covariate roles.
        rows: rows beyond one horizon per series (about its training windows; ``init="auto"`` reads it).
        n_windows: the training windows of the whole panel when the frame fitted is a sample of it, else None.
        seen_past_end: ids of series the prior of its frequency was trained on past their last observed target
            (``prior_corpus``; found only where a fit may start from that prior).
    """

    offset: pd.DateOffset
    roles: CovariateRoles
    rows: int
    n_windows: int | None = None
    seen_past_end: tuple = ()


@dataclass(frozen=True)
class FitPlan:
    """A fit's resolved choices.

    Attributes:
        start: ``"scratch"`` (random weights), ``"prior"`` (the shipped prior) or ``"continue"`` (a warm start from the
            previous fit's weights).
        prior: the family of the prior a fit starts from (None otherwise).
        freq: the data's frequency (pandas alias).
        units: window length, season and target units (``input_size`` the prior's when it starts from one).
        quantiles: the levels the network is trained on.
        n_members: ensemble members; ``seeds``: each member's seed.
        budget: the step budget's policy (a key of ``BUDGETS``, ``"given"`` or ``"none"``: no training step).
        max_steps, early_stopping: as resolved against the training windows (None until the plan is run).
        learning_rate: the optimiser's rate; ``prior_rate_share``: the share of it for the prior's own weights.
        calibrate: whether windows are held out to choose the blend and calibrate the intervals (as run: False when
            the series were too short to spare any).
        warm_starts: fits that continued from these weights since the last full fit.
        notes: why a fit starts elsewhere than it could have (the estimator warns with them).
        step_cap: the budget's cap up to ``budget.STEP_CAP_WINDOWS`` training windows (``budget.step_cap``: lower for
            daily data).
        prior_check: the fit declares future-known covariates (and no other kind), starts from scratch under
            ``init="auto"`` on a panel the prior would serve without them, and so is checked first
            (``model.covariate_check``): the prior is fitted as it is, and the fit trains from scratch only where the
            prior's held-out errors follow a covariate.
        screen: the fit declares future-known covariates and trains from scratch under ``init="auto"`` with the
            budget the package sets (after the prior check, where one applies), so the history is screened first
            (``model.covariate_screen``): where no covariate moves the target, the fit is the fit without them.
        covariates_read: whether the fitted network reads the declared covariates (False: the check kept the prior,
            or the screen found nothing).
        unread: the declared future-known covariates the screen set aside (the fitted state does not list them, and
            ``predict`` accepts them in ``future_df`` without reading them).
        check: the check's or the screen's figures once run (``CheckResult.to_dict``, ``ScreenResult.to_dict``), else
            None.
    """

    start: str
    prior: str | None
    freq: str
    units: dict
    quantiles: tuple[float, ...]
    n_members: int
    seeds: tuple[int, ...]
    budget: str
    max_steps: int | None
    early_stopping: bool | None
    learning_rate: float
    prior_rate_share: float | None
    calibrate: bool
    warm_starts: int
    notes: tuple[str, ...] = ()
    prior_check: bool = False
    step_cap: int = STEP_CAP
    screen: bool = False
    covariates_read: bool = True
    unread: tuple[str, ...] = ()
    check: dict | None = None
    prior_model: Prior | None = field(default=None, repr=False, compare=False)

    @property
    def init(self) -> str:
        """Where the fit started, in the words of ``FittedState.init``."""
        return STARTS[self.start]

    @property
    def trains(self) -> bool:
        return self.budget != "none"

    def steps(self, params: Mapping[str, Any], n_windows: int) -> int:
        """Training steps for ``n_windows`` training windows: ``max_steps`` as given, else the budget's."""
        return params["max_steps"] or BUDGETS[self.budget](n_windows, params["batch_size"], self.step_cap)

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form (model files store it), without the prior's weights."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "prior_model"}
        lists = {name: list(getattr(self, name)) for name in ("quantiles", "seeds", "notes", "unread")}
        check = None if self.check is None else dict(self.check)
        return {**out, "units": dict(self.units), **lists, "check": check}

    @classmethod
    def from_dict(cls, plan: Mapping[str, Any]) -> FitPlan:
        tuples = {name: tuple(plan.get(name, ())) for name in ("quantiles", "seeds", "notes", "unread")}
        check = plan.get("check")
        return cls(**{**plan, "units": dict(plan["units"]), **tuples, "check": None if check is None else dict(check)})


def panel_facts(
    params: Mapping[str, Any],
    frame: pd.DataFrame,
    n_windows: int | None = None,
    offset: pd.DateOffset | None = None,
    tz: str | None = None,
) -> PanelFacts:
    """What the plan of a fit with ``params`` on ``frame`` needs to know of it (``n_windows``, ``offset``: of the whole
    panel when ``frame`` is a sample of it; by default they come from ``frame``; ``tz``: the zone token of ``frame``'s
    naive times, so that a frequency that cannot be inferred is shown in the data's zone)."""
    columns = Columns.from_params(params)
    if offset is None:
        freq = params["freq"]
        with messages_in_zone(tz):
            offset = normalise_freq(freq) if freq is not None else infer_offset(frame[columns.time], frame[columns.id])
    rows = n_windows if n_windows is not None else frame_windows(frame, columns, params["horizon"])
    seen: list = []
    if params["init"] == "pretrained" or (params["init"] == "auto" and rows <= AUTO_PRIOR_MAX_ROWS):
        with contextlib.suppress(PriorUnavailableError):  # no prior serves the frequency: it has no corpus either
            seen = seen_past_end(frame, columns.id, columns.target, family_of(offset))
    return PanelFacts(offset, CovariateRoles.from_params(params), rows, n_windows, tuple(seen))


def _prior(params: Mapping[str, Any], facts: PanelFacts, units: dict) -> tuple[Prior | None, str | None]:
    """The prior a fit starts from (``init``: always with "pretrained", on small panels with "auto"), or None;
    and, where ``init="auto"`` could have started from the prior but does not, why."""
    asked = {**units, "input_size": params["input_size"]}
    prior, reason = None, None
    if params["init"] == "pretrained":
        prior = prior_for(facts.offset, params, asked)
    elif params["init"] == "auto":
        prior, reason = auto_prior(facts.offset, params, asked, facts.roles, facts.rows)
    if prior is None or not facts.seen_past_end:
        return prior, reason
    seen = facts.seen_past_end
    what = (
        "it was trained on M3's training parts, which run past the last observed target of "
        f"{len(seen)} series of this panel ({shown_ids(seen)}): its forecasts of them would read their later values, "
        "so no score of them would be out of sample"
    )
    if params["init"] == "pretrained":
        raise LeakageError(
            f"init='pretrained' starts from the {prior.family} prior, but {what}. Fit from scratch (init='scratch'), "
            "or give those series up to the end of their M3 training part (the prior holds each without its last "
            "h + 2 * ceil(h / 2) periods, h the M3 horizon: 6 yearly, 8 quarterly and other, 18 monthly)."
        )
    return None, f"init='auto' fits from scratch, not from the {prior.family} prior: {what}."


def _continue_reason(previous, params: Mapping[str, Any], roles, freq: str, quantiles, units: dict) -> str | None:
    """Why a warm start cannot continue from ``previous`` (a fitted state and its network's config), or None."""
    state, config = previous
    aside = set_aside(state)  # covariates the previous fit's screen set aside: its weights never read them
    closed = params["closed_when"]
    closing = [name for name in aside if isinstance(closed, Mapping) and name in closed and name in roles.future]
    if closing:  # a closure is a use of the covariate, which those weights cannot make
        return f"closed_when reads {closing}, which the fit it would continue from set aside (its weights never read them)"
    roles = replace(roles, future=tuple(name for name in roles.future if name not in aside))
    members = params["n_models"] or state.n_members  # None: as many as the model has
    wanted = {"roles": roles, "freq": freq, "quantiles": quantiles, "n_members": members, "scaler": params["scaler"]}
    reason = incompatibility(state, {**wanted, **units})
    if reason is None and architecture_changed(config, params):
        reason = "the network's size or architecture changed"
    return reason


def _budget(params: Mapping[str, Any], start: str, roles: CovariateRoles) -> str:
    """The step budget's policy, by how the fit starts."""
    if params["max_steps"] == 0:
        return "none"
    if params["max_steps"] is not None:
        return "given"
    # Covariates the prior never saw start from zero weights and need a full budget to be learnt.
    if start == "prior" and not (roles.future or roles.past or roles.static):
        return "prior as it is" if params["init"] == "auto" else "fine-tune"
    if start == "continue":
        return "warm start"
    return "covariates" if roles.future else "default"


def plan_fit(params: Mapping[str, Any], facts: PanelFacts, previous=None) -> FitPlan:
    """The plan of a fit with the estimator's (checked) ``params`` on a panel with ``facts``.

    ``previous``: ``(state, network config)`` of the estimator's current fit, or None when it has none. Nothing is
    warned or changed here: where a fit starts elsewhere than it could have, the plan's ``notes`` say why.

    Raises:
        PriorUnavailableError: ``init="pretrained"`` and no prior serves the fit.
    """
    roles, freq = facts.roles, facts.offset.freqstr
    units = resolve_units(params, facts.offset)
    quantiles = training_quantiles(params["quantiles"])
    prior, not_prior = _prior(params, facts, units)
    if prior is not None:
        units["input_size"], quantiles = prior.input_size, prior.quantiles
    notes, warm = [], params["warm_start"] and previous is not None
    if warm:
        # input_size None after a fit that started from the prior: the prior's window, which the model has (a default
        # window would differ from it and send the warm start from scratch, though nothing changed)
        from_prior = previous[0].init == "pretrained" and params["input_size"] is None
        kept = {**units, "input_size": previous[0].input_size} if from_prior else units
        reason = _continue_reason(previous, params, roles, freq, quantiles, kept)
        units = kept if reason is None else units
        if reason is not None:
            instead = f"fitting from the {prior.family} prior (init={params['init']!r})" if prior else "fitting from scratch"
            notes.append(f"warm_start=True but {reason}; {instead}.")
            warm = False
    elif not_prior is not None:  # a warm start that could not continue said why above
        notes.append(not_prior)
    if warm:
        prior = None  # a warm start continues from its own weights
    start = "continue" if warm else "prior" if prior is not None else "scratch"
    count = previous[0].n_members if warm else member_count(params["n_models"], None if prior is None else len(prior.members))
    budget = _budget(params, start, roles)
    only_future = bool(roles.future) and not (roles.past or roles.static)
    prior_check = start == "scratch" and only_future and _prior_without_covariates(params, facts) is not None
    screen = start == "scratch" and bool(roles.future) and _screens(params)
    return FitPlan(
        start=start,
        prior=None if prior is None else prior.family,
        freq=freq,
        units=units,
        quantiles=tuple(quantiles),
        n_members=count,
        seeds=tuple(params["random_state"] + k for k in range(count)),
        budget=budget,
        max_steps=0 if budget == "none" else None,
        early_stopping=False if budget == "none" else None,
        learning_rate=float(params["learning_rate"]),
        prior_rate_share=FINE_TUNE_LEARNING_RATE_SHARE if start == "prior" and budget != "none" else None,
        calibrate=budget != "none" and needs_calibration(params),
        warm_starts=previous[0].warm_starts + 1 if warm else 0,
        notes=tuple(notes),
        prior_check=prior_check,
        step_cap=step_cap(freq),
        screen=screen,
        prior_model=prior,
    )


def _prior_without_covariates(params: Mapping[str, Any], facts: PanelFacts) -> Prior | None:
    """The prior ``init="auto"`` would start a fit of this panel from, were no covariate declared (None: none would).

    Only where the package sets the budget (``max_steps`` None: a budget given is a budget taken, and so are the
    covariates that come with it) and the fit holds windows out (``needs_calibration``), which the check is read on.
    """
    if params["init"] != "auto" or params["max_steps"] is not None or not needs_calibration(params):
        return None
    if facts.seen_past_end:  # the prior was trained on the panel's later values: no check against it either
        return None
    units = {**resolve_units(params, facts.offset), "input_size": params["input_size"]}
    prior, _ = auto_prior(facts.offset, params, units, CovariateRoles(), facts.rows)
    return prior


def _screens(params: Mapping[str, Any]) -> bool:
    """Whether a fit from scratch with future-known covariates screens them first: under ``init="auto"`` with the
    budget the package sets (a budget given is a budget taken, and so are the covariates that come with it), and with
    no closure declared (a closure declared on a covariate is a use of it)."""
    return params["init"] == "auto" and params["max_steps"] is None and not isinstance(params["closed_when"], Mapping)


def keeping_future(params: Mapping[str, Any], facts: PanelFacts, kept: tuple[str, ...]) -> tuple[dict, PanelFacts]:
    """The parameters and facts of the same fit with only the future-known covariates ``kept`` declared (what a fit
    whose screen set the others aside runs)."""
    return {**params, "future_covariates": kept}, replace(facts, roles=replace(facts.roles, future=kept))


def prior_challenger(params: Mapping[str, Any], facts: PanelFacts) -> FitPlan:
    """The plan a fit with ``plan.prior_check`` is checked against: the prior as ``init="auto"`` keeps it without
    covariates (no training step, calibrated on held-out windows). Run on the panel with its covariates, their weights
    are zero (``prior.adapted_weights``): its forecasts are the prior's, and its blend is chosen as a fit without
    covariates chooses it."""
    bare = plan_fit(params, replace(facts, roles=CovariateRoles()))
    return replace(bare, covariates_read=False)


def resolved(plan: FitPlan, job) -> FitPlan:
    """``plan`` with the steps, early stopping and held-out windows of the training job that carries it out."""
    train = job.train
    return replace(plan, max_steps=train.max_steps, early_stopping=train.early_stopping, calibrate=job.holdout is not None)
