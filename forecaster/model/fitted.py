"""The fitted model as the package's own modules use it: state, network and device, and forecasts at any origins.

``Seq2SeqForecaster.fitted()`` hands one out; the backtest's executors and the Dask fold and backtest paths forecast
through it instead of the estimator's internals (a fit, ``load`` and the Dask model shipping adopt a fit through
``set_fitted()``). It holds references, not copies: building one is free.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..data.frequency import normalise_freq
from ..data.panel import Panel, padding_expected, with_future
from ..data.validation import Columns
from .inference import Forecast, accountable, forecast_windows, model_panel, state_units
from .network import Ensemble
from .state import FittedState


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

    def panel(self, frame: pd.DataFrame, future: pd.DataFrame | None = None) -> Panel:
        """A frame that ``clean_history`` validated as a panel in this model's units (no second validation).

        ``future``: future-known covariates of the horizon after each series' end (validated by ``clean_future``).
        """
        state = self.state
        offset = normalise_freq(state.freq)
        units, roles = state_units(state), state.roles
        with padding_expected(state.init == "pretrained"):  # the prior's window, trained on padded windows
            return model_panel(frame, self.columns, roles, state.features, offset, self.horizon, units, future, self.fill_gaps)

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


class ForecastMemo:
    """The last forecast pass of a fit and the key of its inputs: ``predict`` after ``explain`` on the same inputs
    reuses it. Each fit gets a new memo; forecasting fills it in place, so the estimator's attributes stay the same."""

    __slots__ = ("_key", "_forecast")

    def __init__(self) -> None:
        self.clear()

    def get(self, key) -> Forecast | None:
        """The pass kept under ``key``, or None."""
        return self._forecast if self._key == key else None

    def keep(self, key, forecast: Forecast) -> None:
        self._key, self._forecast = key, forecast

    def clear(self) -> None:
        self._key, self._forecast = None, None
