"""The fitted model as the package's own modules use it: state, network and device, and forecasts at any origins.

``Seq2SeqForecaster.fitted()`` hands one out; the backtest's executors and the Dask fold and backtest paths forecast
through it instead of the estimator's internals (a fit, ``load`` and the Dask model shipping adopt a fit through
``set_fitted()``). It holds references, not copies: building one is free. ``predict`` and ``explain`` validate their
frames through it (:meth:`FittedModel.forecast_panel`) and reuse a pass on the same inputs (:func:`remembered_forecast`);
the estimator's attributes that read its fitted state (``freq_``, ``fit_plan_``, ...) are :class:`FittedAttributes`'.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from ..data.frequency import normalise_freq
from ..data.panel import Panel, padding_expected, with_future
from ..data.static_labels import warn_statics_ahead
from ..data.validation import Columns, clean_future, clean_history, restore_zone
from .files.migration import unrecorded_blend
from .inference import Forecast, accountable, forecast_windows, model_panel, panel_digest, state_units
from .network import Ensemble
from .params import blend_weights
from .plan import FitPlan
from .state import FittedState, set_aside


def fitted_blend(params: dict, state: FittedState | None) -> dict[str, float]:
    """Each partner's weight (``theta_weight``, ``holt_winters_weight``) resolved; None ones as ``state``'s fit chose them.

    Every fit records its blend; a model file without one (from a fit without held-out windows, or a prior written by
    ``forecaster.pretraining``) forecasts with the weights the version that wrote it resolved (``files.migration``).
    Without a fitted state: the defaults.
    """
    if state is not None and state.calibration is None:
        return unrecorded_blend(params)
    return blend_weights(params, None if state is None else state.calibration.blend)


@dataclass(frozen=True)
class FittedModel:
    """A fit's learned state and network, with what a forecast needs beside them.

    Attributes:
        state: the fitted state (frequency, roles, encodings, calibration, history tail).
        network: the trained ensemble, in eval mode.
        device: where the network runs.
        blend: each statistical partner's weight, resolved (as chosen at fit where the parameter is None).
        columns: the id, time and target column names.
        horizon: periods forecast from each origin.
        fill_gaps: whether missing periods are masked instead of refused.
        num_threads: torch CPU threads while forecasting (None keeps torch's setting).
    """

    state: FittedState
    network: Ensemble
    device: object
    blend: dict[str, float]
    columns: Columns
    horizon: int
    fill_gaps: bool = False
    num_threads: int | None = None

    @property
    def accountable(self) -> bool:
        """Whether forecasts can come with an account of the median (not with ``log_target``)."""
        return accountable(self.state)

    def panel(self, frame: pd.DataFrame, future: pd.DataFrame | None = None, new_history: bool = True) -> Panel:
        """A frame that ``clean_history`` validated as a panel in this model's units (no second validation).

        ``future``: future-known covariates of the horizon after each series' end (validated by ``clean_future``).
        ``new_history``: False for a history whose series shorter than the window a warning has named already (the
        fit's own, a backtest fold's training rows after its refit); other histories name theirs.
        """
        state = self.state
        offset = normalise_freq(state.freq)
        units, roles = state_units(state), state.roles
        # The prior's window was trained on padded windows; a history the fit saw was named by the fit.
        with padding_expected(state.init == "pretrained" or not new_history):
            return model_panel(frame, self.columns, roles, state.features, offset, self.horizon, units, future, self.fill_gaps)

    def forecast_panel(
        self, df: pd.DataFrame | None, future_df: pd.DataFrame | None, memo: ForecastMemo | None = None
    ) -> tuple[Panel, str | None]:
        """The panel to forecast from the end of each series of ``df`` (None: the history tail kept at fit), validated,
        with the horizon's future-known covariates of ``future_df``; and the zone of its timestamps. ``memo``: the
        fit's, which says whether the kept history's short series were named already (then they are not again).

        Without future-known covariates a future frame is still checked: no targets or past covariates in it.

        Raises:
            ValueError: an invalid frame, or no ``future_df`` for a model with future-known covariates.
        """
        state, columns = self.state, self.columns
        frame, tz = (state.history, state.tz) if df is None else clean_history(df, columns, state.roles)
        if state.roles.future and future_df is None:
            raise ValueError(
                f"`future_df` is required: the model uses future-known covariates {list(state.roles.future)} "
                f"for the {self.horizon} periods after each series' end."
            )
        future = None if future_df is None else clean_future(future_df, columns, state.roles, tz, set_aside(state))
        if future_df is not None and state.roles.static:
            warn_statics_ahead(future_df, frame, columns.id, state.roles.static)
        try:
            named = df is None and memo is not None and memo.tail_named
            panel = self.panel(frame, future if state.roles.future else None, new_history=not named)
            if df is None and memo is not None:
                memo.tail_named = True
            return panel, tz
        except ValueError as error:
            if not (tz or "").startswith("utc:") or not re.search(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", str(error)):
                raise  # no zone to add, or no time named
            zone = tz.split(":", 1)[1]  # the panel names its timestamps as the network reads them: in UTC
            note = f"(times above are in UTC, as the model reads sub-daily data: add {zone}'s offset)"
            raise type(error)(f"{error} {note}") from None

    def with_future(self, panel: Panel, future: pd.DataFrame | None) -> Panel:
        """``panel`` with the horizon's future-known covariates placed (a validated frame; None leaves it as it is)."""
        if future is None:
            return panel
        state = self.state
        return with_future(panel, future, self.columns, state.roles, state.features, normalise_freq(state.freq))

    def forecast_at(self, panel: Panel, series: np.ndarray, origins: np.ndarray, account: bool = False) -> Forecast:
        """The inference core on windows (``series[b]``, ``origins[b]``) of ``panel`` (``account``: with the account)."""
        return forecast_windows(
            self.network, self.state, panel, series, origins, self.blend, self.device, self.num_threads, account
        )

    def forecast_ends(self, panel: Panel, account: bool = False) -> Forecast:
        """Forecasts from every series' end of ``panel``."""
        rows = np.arange(len(panel.ids))
        return self.forecast_at(panel, rows, np.full(len(rows), panel.last_col), account=account)


def remembered_forecast(fitted: FittedModel, panel: Panel, memo: ForecastMemo | None, account: bool = False) -> Forecast:
    """Forecast from each series' end (``account``: with its account), reusing the last pass on the same inputs.

    ``explain`` then ``predict`` on one input run the network once; ``predict`` then ``explain`` run it again
    for the state design, whose account (the head's shares by integrated gradients) ``predict`` does not need.
    The pass is kept in the fit's ``memo`` (its contents change, the estimator's attributes do not).
    """
    key = (panel_digest(panel), tuple(fitted.blend.items()), id(fitted.network))
    cached = None if memo is None else memo.get(key)
    if cached is not None and (not account or cached.account is not None or not fitted.accountable):
        return cached
    forecast = fitted.forecast_ends(panel, account=account)
    if memo is not None:
        memo.keep(key, forecast)
    return forecast


class ForecastMemo:
    """The last forecast pass of a fit and the key of its inputs: ``predict`` after ``explain`` on the same inputs
    reuses it. Each fit gets a new memo; forecasting fills it in place, so the estimator's attributes stay the same.

    ``tail_named``: whether the series of the history the model keeps that are shorter than its window have been named
    in a warning (by the fit that trained it, or by the first forecast of that history after a load).
    """

    __slots__ = ("_key", "_forecast", "tail_named")

    def __init__(self, tail_named: bool = False) -> None:
        self.tail_named = tail_named
        self.clear()

    def get(self, key) -> Forecast | None:
        """The pass kept under ``key``, or None."""
        return self._forecast if self._key == key else None

    def keep(self, key, forecast: Forecast) -> None:
        self._key, self._forecast = key, forecast

    def clear(self) -> None:
        self._key, self._forecast = None, None


def history_in_zone(model) -> pd.DataFrame:
    """The history tail a fitted model keeps (``history_``) with its timestamps in the zone the model was fitted in:
    ``history_`` holds them naive (UTC for sub-daily data), as the network reads them, and a frame in the user's zone
    is what ``predict(df=...)``, plots and checks are given."""
    history, tz = model.history_, model.state_.tz
    if not tz:
        return history
    return history.assign(**{model.time_col: restore_zone(pd.DatetimeIndex(history[model.time_col]), tz)})


def _from_state(name: str, doc: str) -> property:
    return property(lambda self: getattr(self.state_, name), doc=doc)


class FittedAttributes:
    """The estimator's fitted attributes that read its fitted state (``state_``) and its training results."""

    freq_ = _from_state("freq", "Frequency of the training data (pandas alias).")
    season_length_ = _from_state("season_length", "Periods per season.")
    input_size_ = _from_state("input_size", "History periods the encoder reads.")
    nonnegative_ = _from_state("nonnegative", "Which forecasts are floored at zero (``resolve.FLOOR_RULES``).")
    closed_when_ = _from_state("closed_when", "Future-covariate values forecast at zero (``model/closures.py``).")
    partner_week_ = _from_state("partner_week", "Periods per week the partners may take as a season (0: none).")
    partners_follow_covariates_ = _from_state(
        "partners_follow_covariates", "Whether the partners' forecasts take the covariates' effect (``model.partner_shift``)."
    )
    roles_ = _from_state("roles", "Covariate roles.")
    features_ = _from_state("features", "Covariate encoders.")
    quantiles_ = _from_state("quantiles", "Levels the network outputs (requested ones plus the median).")
    network_config_ = _from_state("network", "The network's shapes and sizes.")
    tz_ = _from_state("tz", "Time zone of the timestamps (None when naive).")
    history_ = _from_state("history", "History tail kept for predict() without data.")
    training_end_ = _from_state("training_end", "Last training timestamp of each series.")

    @property
    def train_result_(self):
        """The first member's training result (None for a loaded model)."""
        return self.train_results_[0] if self.train_results_ else None

    @property
    def fit_plan_(self) -> FitPlan | None:
        """How the last fit was planned and run (``model.plan.FitPlan``: where it started, its members and seeds, budget
        and steps, rates, what it calibrated, why it started elsewhere than it could have); None if its file has none."""
        check_is_fitted(self, "network_")
        return None if self.state_.plan is None else FitPlan.from_dict(self.state_.plan)
