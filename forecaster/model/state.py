"""The fitted state: everything ``fit`` learns besides the weights, as one frozen object.

``fit`` builds a :class:`FittedState`; ``predict``, ``explain``, the backtest and the model
files read it as one. New learned state is a new field here, serialised by ``to_dict`` /
``from_dict``; nothing else has to change. Settings that give the network's numbers their
meaning (the scaler, the log target, the decomposition inputs) are recorded here at fit
time, so changing the estimator's parameters after ``fit`` cannot silently change what a
trained network is fed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ..data.features import FeatureSpec, index_from_typed, typed_index
from ..data.roles import CovariateRoles
from .calibration import Calibration
from .network import NetworkConfig

# Where a fit can start (``FittedState.init``, the estimator's ``init_``).
INIT_PATHS = ("pretrained", "scratch", "warm start")
# Where a fit plan starts and the policies of its step budget (``forecaster.model.plan``; model files check them).
PLAN_STARTS = ("scratch", "prior", "continue")
PLAN_BUDGETS = ("default", "covariates", "warm start", "fine-tune", "prior as it is", "given", "none")


@dataclass(frozen=True)
class FittedState:
    """What a fitted model knows besides its weights.

    Attributes:
        freq: pandas offset alias of the data.
        season_length: periods per season.
        input_size: history periods the encoder reads.
        roles: covariate roles.
        features: covariate encoders (standardisation, categories of statics).
        quantiles: levels the network outputs (the requested ones plus the median).
        network: the network's shapes and sizes.
        n_members: ensemble members.
        tz: time zone of the timestamps (None when naive).
        history: the history tail kept for ``predict()`` without data.
        training_end: last training timestamp of each series.
        scaler, log_target, seasonal_profile, trend_line: how targets were turned into network
            inputs (``trend_line`` resolved, never None).
        warm_starts: fits that continued from these weights since the last full fit.
        calibration: the partners' weights and quantile offset factors learnt on held-out windows
            (None: fitted without them, or a file written before they existed).
        init: where the fit that produced these weights started: ``"pretrained"`` (the shipped prior),
            ``"scratch"`` (random weights) or ``"warm start"`` (a previous fit's weights); None for a file written
            before fits recorded it.
        nonnegative: which forecasts are floored at zero (``resolve.FLOOR_RULES``); "none" for a file written before
            fits recorded it, so that it forecasts as it did.
        partner_week: periods per week that each series' partners take as their season where the week forecasts
            better (``partners.season``); 0 for none, and for a file written before fits recorded it.
        partners_follow_covariates: whether each partner's forecast takes what the future-known covariates change, as
            the network estimates it (``model.partner_shift``); False for a file written before fits recorded it.
        closed_when: each future-known covariate's values that mark closed periods, forecast as zero
            (``model.closures``); empty for none, and for a file written before fits recorded closures.
        plan: the fit's resolved plan (``forecaster.model.plan.FitPlan.to_dict``); None for a file written before fits
            recorded it, and for a prior written by ``forecaster.pretraining``.
    """

    freq: str
    season_length: int
    input_size: int
    roles: CovariateRoles
    features: FeatureSpec
    quantiles: tuple[float, ...]
    network: NetworkConfig
    n_members: int
    tz: str | None
    history: pd.DataFrame = field(repr=False)
    training_end: pd.Series = field(repr=False)
    scaler: str = "standard"
    log_target: bool = False
    seasonal_profile: bool = False
    trend_line: bool = False
    warm_starts: int = 0
    calibration: Calibration | None = None
    init: str | None = None
    plan: dict[str, Any] | None = field(default=None, repr=False)
    nonnegative: str = "none"
    closed_when: dict[str, list[float]] = field(default_factory=dict)
    partner_week: int = 0
    partners_follow_covariates: bool = False

    @property
    def median_index(self) -> int:
        return self.quantiles.index(0.5)

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form, without the history tail (model files store it as arrays).

        Series ids and categories are typed (``features.to_typed``): an id ``1`` and an id ``"1"`` stay two series.
        """
        return {
            "freq": self.freq,
            "season_length": self.season_length,
            "input_size": self.input_size,
            "roles": {"future": list(self.roles.future), "past": list(self.roles.past), "static": list(self.roles.static)},
            "features": self.features.to_dict(),
            "quantiles": list(self.quantiles),
            "network": self.network.to_dict(),
            "n_members": self.n_members,
            "tz": self.tz,
            "training_end": {
                "ids": typed_index(self.training_end.index),
                "ds": [str(t) for t in self.training_end.to_numpy()],
                "name": self.training_end.name,
            },
            "scaler": self.scaler,
            "log_target": self.log_target,
            "seasonal_profile": self.seasonal_profile,
            "trend_line": self.trend_line,
            "warm_starts": self.warm_starts,
            "calibration": None if self.calibration is None else self.calibration.to_dict(),
            "init": self.init,
            "plan": self.plan,
            "nonnegative": self.nonnegative,
            "closed_when": {name: list(values) for name, values in self.closed_when.items()},
            "partner_week": self.partner_week,
            "partners_follow_covariates": self.partners_follow_covariates,
        }

    @classmethod
    def from_dict(cls, fitted: dict[str, Any], history: pd.DataFrame, id_col: str) -> FittedState:
        """Rebuild from :meth:`to_dict`, every field present (``files.migration.upgraded_state`` fills those a file
        written before they existed lacks).

        Format-1 files list the ids of ``training_end`` as plain JSON values; later ones type them.
        """
        roles = fitted["roles"]
        ends = fitted["training_end"]
        ids = index_from_typed(ends["ids"], id_col) if isinstance(ends["ids"], dict) else pd.Index(ends["ids"], name=id_col)
        return cls(
            freq=fitted["freq"],
            season_length=int(fitted["season_length"]),
            input_size=int(fitted["input_size"]),
            roles=CovariateRoles(tuple(roles["future"]), tuple(roles["past"]), tuple(roles["static"])),
            features=FeatureSpec.from_dict(fitted["features"]),
            quantiles=tuple(float(q) for q in fitted["quantiles"]),
            network=NetworkConfig(**fitted["network"]),
            n_members=int(fitted["n_members"]),
            tz=fitted["tz"],
            history=history,
            training_end=pd.Series(pd.to_datetime(ends["ds"]), index=ids, name=ends.get("name")),
            **{name: fitted[name] for name in ("scaler", "log_target", "seasonal_profile", "trend_line")},
            warm_starts=int(fitted["warm_starts"]),
            calibration=None if fitted["calibration"] is None else Calibration.from_dict(fitted["calibration"]),
            init=fitted["init"],
            plan=fitted["plan"],
            nonnegative=fitted["nonnegative"],
            closed_when={name: [float(v) for v in values] for name, values in fitted["closed_when"].items()},
            partner_week=int(fitted["partner_week"]),
            partners_follow_covariates=bool(fitted["partners_follow_covariates"]),
        )


def reads_covariates(state: FittedState) -> bool:
    """Whether the fitted network reads its declared covariates (False where the covariate check kept the prior)."""
    return state.plan is None or state.plan.get("covariates_read", True)


def set_aside(state: FittedState) -> tuple[str, ...]:
    """The declared future-known covariates the fit's screen set aside (``model.covariate_screen``)."""
    return tuple((state.plan or {}).get("unread", ()))
