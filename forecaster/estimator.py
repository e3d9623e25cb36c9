"""`Seq2SeqForecaster`: the scikit-learn-style facade. It checks parameters (``model.params``), validates frames
(``data.validation``), makes a fit's plan (``model.plan.plan_fit``), runs it (``model.execute.run_plan``) and holds
the fitted model (``model.fitted.FittedModel``), through which every forecast goes; no forecasting logic of its own.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Sequence

import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .callers import user_stacklevel
from .data.features import FeatureSpec
from .data.panel import Panel
from .data.roles import CovariateRoles
from .data.validation import Columns, clean_future, clean_history
from .engines import engine, is_dask_frame
from .model.execute import run_plan
from .model.files import load_model, save_model
from .model.fitted import FittedAttributes, FittedModel, ForecastMemo, fitted_blend, remembered_forecast
from .model.members import MemberTrainer
from .model.network import Ensemble
from .model.outputs import check_column_names, explanation, forecast_frame, quantile_column
from .model.params import NINE_LEVELS, check_params, refuse_changed
from .model.plan import panel_facts, plan_fit
from .model.prior import check_served, zero_shot_params
from .model.state import FittedState
from .model.training import TrainResult

__all__ = ["Seq2SeqForecaster", "quantile_column"]


class Seq2SeqForecaster(FittedAttributes, BaseEstimator):
    """Global attention encoder-decoder that forecasts every horizon step in one pass.

    One network is trained across all series of a long DataFrame (``unique_id``, ``ds``, ``y`` plus covariates). A
    bidirectional GRU/LSTM reads a per-window scaled history; each horizon step attends over all encoder states with
    its own query built from a step embedding, its future-known covariates, calendar features and statics.
    docs/defaults.md gives each default's evidence in one line; docs/model.md explains it.

    Parameters (all but ``horizon`` keyword-only):
        horizon: number of periods to forecast.
        input_size: history periods fed to the encoder; None gives ``max(horizon, 2 * season_length, 8)``.
        freq, season_length: pandas offset alias and periods per season; inferred when None.
        future_covariates, past_covariates, static_covariates: columns known in advance (decoder only), observed up to
            the origin (encoder only), constant per series (numeric or categorical).
        quantiles: levels to forecast (default the nine deciles); None gives point forecasts (MAE loss). Each level's
            offset from the median is calibrated per step on held-out windows (``model.calibration``).
        attention: ``"dot"`` (scaled dot-product) or ``"additive"``.
        attention_values: ``"states"`` (the most accurate): attention averages encoder states a head reads, so its
            maps can point away from what drives the forecast (``explain`` splits it by integrated gradients).
            ``"observations"`` (faithful, a little less accurate; docs/attention.md): the median is the attention-
            weighted average of the observations, each moved to the target by the long-run seasonal profile and trend
            line, plus a history-free effect of step, calendar, statics and covariates (weight x value: a point's share).
        hidden_size, num_layers, cell, dropout: network size (``cell`` is ``"gru"`` or ``"lstm"``).
        linear_skip: a linear map from the scaled history to every step (None: on with state values, off with observations).
        scaler: per-window target scaling, ``"standard"``, ``"robust"`` or ``"meanabs"``.
        loss_scale: ``"seasonal_naive"`` (errors over each series' MASE scale up to the origin, so training weighs
            series as MASE does) or ``"window"`` (window-scaled units).
        log_target: model ``log(1 + y)``; quantiles are mapped back exactly by ``expm1``.
        seasonal_profile, trend_line: long-run seasonal profile (5 seasons) and trend line inputs (None: where a season
            spans a year or more).
        theta_weight, holt_winters_weight: weights of the Theta method and damped Holt-Winters, fitted per series up to
            the origin. None: 0.25 each (0.15 with future-known covariates) unless held-out windows show a partner
            clearly hurting (then 0; ``state_.calibration.blend``); none with future-known covariates and no held-out
            windows. Given weights (0.25 for an unset one; what is left with covariates) must sum to at most 1.
        weekly_partners: data finer than a day: partners take the week as season where it forecast better over the last
            4 weeks (``partners/season.py``). None: up to 15-minute data; ``partner_week_``: the week allowed (0: none).
        partners_follow_covariates: None/True: each partner's forecast takes the network's estimate of what the
            future-known covariates change (``model/partner_shift.py``); False: not. ``partners_follow_covariates_``.
        max_steps: training steps; None derives them from the windows (0: see ``init``). batch_size, learning_rate.
        early_stopping: hold out every series' last horizon (and the origins calibration holds out) to pick the best
            step; None: on where the budget would pass over the windows over 6 times.
        refit_on_full: after early stopping, retrain on every window for the best step count.
        warm_start: ``fit`` continues from the current weights with a quarter of the budget when the fitted state is
            compatible (same roles, frequency, window, network, units; new series or categories fine), else warns and fits anew.
        init: ``"auto"``: from the shipped prior (docs/prior.md) for a small panel without covariates (at most 4,000
            rows beyond one horizon per series) of a served frequency (yearly, quarterly, monthly) with the prior's
            architecture, unless a warm start, taking no step with ``max_steps`` None (the held-out windows calibrate
            its blend and intervals); else random weights. ``"scratch"``: random weights. ``"pretrained"``: the prior,
            fine-tuned at a hundredth of the learning rate for a quarter of the steps, scored from step 0 (the prior
            may win); new covariates start at zero weights and the full rate; the architecture must be the prior's
            (``input_size`` None: its), ``max_steps=0`` keeps it as it is (:meth:`from_pretrained`). ``init_``: the start.
        nonnegative: floor the median and every quantile at zero. None: each series whose history up to the origin is
            never negative; True: every series; False: never (quantiles stay ordered; the lift in ``explain``; ``nonnegative_``).
        closed_when: periods forecast at zero: "history" learns them (``model/closures.py``), or ``{column: values}``.
        fill_gaps: accept missing periods and mask them instead of raising. id_col, time_col, target_col: column names.
        n_models: ensemble members (seeds ``random_state + k``), forecasting their median (mean for observations).
            None: one per member of the prior a fit starts from (member k from its member k), else one; a warm start
            keeps its count. Without training steps more than the prior's three only repeat members.
        n_jobs, device, num_threads: worker processes training members in parallel (one torch thread each); ``"auto"``
            (CUDA when available), ``"cpu"`` or ``"cuda"``; torch CPU threads during fit/predict (None: torch's).
        progress, random_state: a progress bar while training; the seed (the same gives identical forecasts on CPU).

    Fitted attributes: ``state_`` (:class:`~forecaster.model.state.FittedState`), ``network_``, ``train_results_``,
    ``fit_plan_`` and shortcuts to the state (``freq_``, ``history_``, ...); :meth:`fitted` hands them out together
    (:class:`~forecaster.model.fitted.FittedModel`). ``predict`` and ``explain`` never fit or change them (only ``fit``
    and ``load`` do); a model from :meth:`from_pretrained` forecasts any panel without becoming fitted to it.
    """

    def __init__(
        self,
        horizon: int,
        *,
        input_size: int | None = None,
        freq: str | None = None,
        season_length: int | None = None,
        future_covariates: Sequence[str] = (),
        past_covariates: Sequence[str] = (),
        static_covariates: Sequence[str] = (),
        quantiles: Sequence[float] | None = NINE_LEVELS,
        attention: str = "dot",
        attention_values: str = "states",
        hidden_size: int = 64,
        num_layers: int = 1,
        cell: str = "gru",
        dropout: float = 0.1,
        linear_skip: bool | None = None,
        scaler: str = "standard",
        loss_scale: str = "seasonal_naive",
        log_target: bool = False,
        seasonal_profile: bool = True,
        trend_line: bool | None = None,
        theta_weight: float | None = None,
        holt_winters_weight: float | None = None,
        weekly_partners: bool | None = None,
        partners_follow_covariates: bool | None = None,
        max_steps: int | None = None,
        batch_size: int = 128,
        learning_rate: float = 3e-3,
        early_stopping: bool | None = None,
        refit_on_full: bool = False,
        warm_start: bool = False,
        init: str = "auto",
        fill_gaps: bool = False,
        nonnegative: bool | None = None,
        closed_when: str | dict | None = "history",
        id_col: str = "unique_id",
        time_col: str = "ds",
        target_col: str = "y",
        n_models: int | None = None,
        n_jobs: int = 1,
        device: str = "auto",
        num_threads: int | None = 1,
        progress: bool = True,
        random_state: int = 0,
    ):
        for name, value in dict(locals()).items():  # stored as given, checked at fit (scikit-learn's convention)
            if name != "self":
                setattr(self, name, value)

    def _columns(self) -> Columns:
        return Columns.from_params(self.get_params())

    def _roles(self) -> CovariateRoles:
        return CovariateRoles.from_params(self.get_params())

    def _blend_weights(self, state: FittedState | None = None) -> dict[str, float]:
        """Each partner's weight resolved, None ones as the fit of ``state`` (default: the model's) chose them."""
        return fitted_blend(self.get_params(), getattr(self, "state_", None) if state is None else state)

    def _check_unchanged(self) -> None:
        """Refuse to forecast with parameters other than those the model was fitted with (see ``TRAINING_ONLY``)."""
        refuse_changed(getattr(self, "_fitted_params", None) or self.get_params(), self.get_params())

    def fitted(self) -> FittedModel:
        """The fitted model as the package's modules use it (state, network, device; forecasts at any origins).

        Raises NotFittedError before a fit, ValueError when a parameter that shapes the forecasts changed since it.
        """
        check_is_fitted(self, "network_")
        self._check_unchanged()
        return self._fitted_model()

    def _fitted_model(self, state: FittedState | None = None, network: Ensemble | None = None, device=None) -> FittedModel:
        """The fitted model of the estimator's fit, or of the fit of ``state``, ``network`` and ``device``."""
        if state is None:
            state, network, device = self.state_, self.network_, self.device_
        blend, columns = self._blend_weights(state), self._columns()
        return FittedModel(state, network, device, blend, columns, self.horizon, self.fill_gaps, self.num_threads)

    def set_fitted(self, state: FittedState, network: Ensemble, device, results: list[TrainResult]) -> Seq2SeqForecaster:
        """Adopt a fit's outcome (``fit``, ``load`` and the scale-out paths end here); returns ``self``. The parameters
        are recorded with it: a forecast refuses ones changed since and never reuses a pass of an earlier fit."""
        self.state_, self.network_, self.device_, self.train_results_ = state, network, device, results
        self.init_ = state.init  # how the weights were started; a loaded model reports it as its file recorded it
        self._fitted_params, self._cache = copy.deepcopy(self.get_params()), ForecastMemo(tail_named=bool(results))
        return self

    def fit(self, df: pd.DataFrame, y: object = None) -> Seq2SeqForecaster:
        """Train one network on every series of ``df``; returns ``self``.

        ``df`` holds ``unique_id``, ``ds``, ``y`` and the declared covariate columns (future-known covariates with their
        historical values). NaN targets are masked. A Dask DataFrame is fitted on training windows of every series
        drawn on the workers (``scale.dask_fit``; as a whole frame when its windows are few enough)."""
        check_column_names(self.id_col, self.time_col, self.target_col)
        if is_dask_frame(df):
            return engine("dask.fit")(self, df)
        frame, tz = clean_history(df, self._columns(), self._roles())
        self.fit_frame(frame, tz)
        return self

    def fit_frame(
        self,
        frame: pd.DataFrame,
        tz: str | None,
        train_members: MemberTrainer | None = None,
        features: FeatureSpec | None = None,
        n_windows: int | None = None,
        offset: pd.DateOffset | None = None,
    ) -> Panel:
        """Fit on a frame that ``clean_history`` already validated (the package's own way in: the backtest's folds, the
        scale-out paths); returns the panel the fit built, from which the backtest forecasts (``fitted().forecast_at``).

        ``train_members(job, seeds, initial)`` trains the members instead of ``fit_members`` (``scale.distributed``).
        ``features``, ``n_windows`` and ``offset``: the covariate encodings, training windows and frequency of a whole
        panel of which ``frame`` is a sample (``scale.window_stream``); by default they come from ``frame``.
        """
        previous = (self.state_, self.network_) if hasattr(self, "network_") else None
        fit = self._planned_fit(frame, tz, previous, train_members, features, n_windows, offset)
        # Learned state is assigned only once training has finished: an interrupted fit leaves the estimator as it was.
        self.set_fitted(fit.state, fit.network, fit.device, fit.results)
        return fit.panel

    def _planned_fit(self, frame, tz, previous=None, train_members=None, features=None, n_windows=None, offset=None):
        """Check the parameters, plan the fit of ``frame``, run the plan and warn with its notes (at the user's line);
        ``previous``: ``(state, network)`` of the fit a warm start may continue from."""
        check_params(params := self.get_params())
        facts = panel_facts(params, frame, n_windows, offset, tz)
        plan = plan_fit(params, facts, None if previous is None else (previous[0], previous[1].config))
        fit = run_plan(plan, facts, frame, tz, params, previous, train_members, features)
        for note in fit.plan.notes:
            warnings.warn(note, UserWarning, stacklevel=user_stacklevel())
        return fit

    @classmethod
    def from_pretrained(cls, horizon: int, **params) -> Seq2SeqForecaster:
        """A model that forecasts any panel with the shipped prior, without fitting (docs/prior.md).

        ``predict(df=...)`` and ``explain(df=...)`` infer the frequency of ``df`` (or use ``freq``), pick the prior that
        serves it (yearly, quarterly or monthly data, horizons up to 48) and forecast from the target alone: the
        network's own quantiles, the partners at their default weights. They leave the model as it was (each panel is
        forecast on its own); ``fit(df)`` takes no training step and keeps the prior set up for ``df`` for ``predict()``
        without data and for ``save``. The same model is ``Seq2SeqForecaster(horizon, init="pretrained", max_steps=0,
        **params)``, so a backtest scores exactly these forecasts. Covariates need a fit (``init="pretrained"``).

        Raises ValueError when covariates are declared or a parameter differs from the prior's (``PriorUnavailableError``).
        """
        model = cls(horizon, **zero_shot_params(params))
        check_params(model.get_params())
        check_served(model.get_params())
        model._follows_data = True
        return model

    def _zero_shot(self, df: pd.DataFrame | None, future_df: pd.DataFrame | None) -> tuple[FittedModel, Panel, str | None]:
        """For a model from :meth:`from_pretrained`: the prior set up for ``df`` as a fitted model of its own (the model
        is left as it was), the panel of ``df`` (no covariates; ``future_df`` is still checked) and its zone."""
        if df is None:
            raise ValueError(
                "A model from `from_pretrained` has no series of its own: pass the history to forecast, predict(df=...)."
            )
        check_params(self.get_params())
        frame, tz = clean_history(df, self._columns(), self._roles())
        fit = self._planned_fit(frame, tz)
        if future_df is not None:  # no targets or past covariates in it
            clean_future(future_df, self._columns(), fit.state.roles, tz)
        return self._fitted_model(fit.state, fit.network, fit.device), fit.panel, tz

    def _source(self, df: pd.DataFrame | None, future_df: pd.DataFrame | None):
        """The fitted model to forecast with, the panel to forecast, its zone, and the memo of the model's last pass
        (None for a zero-shot forecast: a model from :meth:`from_pretrained` given ``df``, which it does not keep)."""
        if getattr(self, "_follows_data", False) and (df is not None or not hasattr(self, "network_")):
            return (*self._zero_shot(df, future_df), None)
        fitted = self.fitted()
        return (fitted, *fitted.forecast_panel(df, future_df, getattr(self, "_cache", None)), getattr(self, "_cache", None))

    _forecast_ends = staticmethod(remembered_forecast)

    def predict(self, df: pd.DataFrame | None = None, future_df: pd.DataFrame | None = None) -> pd.DataFrame:
        """Forecast ``horizon`` periods after the end of each series.

        Args:
            df: history to forecast from; None uses the training series. Series unseen in training are allowed.
            future_df: known covariates over the horizon, if the model has any (later dates, other series: not read).

        Returns:
            One row per series and step: ``unique_id``, ``ds``, ``y_hat`` (the median) and one ``y_hat_q..`` column per
            requested quantile. A lazy Dask DataFrame when ``df`` is one (``future_df`` may then be Dask or pandas).
        """
        if is_dask_frame(df) or is_dask_frame(future_df):
            return engine("dask.forecast_frames")(self, "predict", df, future_df)
        fitted, panel, tz, memo = self._source(df, future_df)
        forecast = self._forecast_ends(fitted, panel, memo)
        return forecast_frame(panel, forecast, fitted.state.quantiles, self.quantiles, self.id_col, self.time_col, tz)

    def explain(
        self,
        df: pd.DataFrame | None = None,
        future_df: pd.DataFrame | None = None,
        include_padding: bool = False,
        by: str = "point",
    ) -> pd.DataFrame:
        """Where the forecast came from: per history point (``by="point"``) or per (series, step) (``by="step"``).

        ``by="point"`` (the default): attention weights of each horizon step over the history, in long format:
        ``unique_id``, ``ds`` (target time), ``step`` (1..horizon), ``ds_history`` (attended time), ``lag`` (periods
        from the attended time to the origin; 0 is the origin) and ``weight``, summing to one per (series, step) (with
        ``attention_values="observations"``, zero where a window holds no observed target: an ``EmptyWindowWarning``
        names such series). Padded positions (before a series starts) get zero weight and are omitted, or kept and
        flagged in a ``padded`` column with ``include_padding=True``. Beside them (none with ``log_target``),
        ``contribution``: each history point's share of the median, the network's blend weight applied. The columns
        ``step_*`` columns and ``y_hat`` repeat a step's parts on each of its history rows (summing them over rows means
        nothing; ``by="step"`` is the frame to read); ``closed_step``: a closure (``closed_when``) made the step zero.

        ``by="step"``: one row per (series, step), ``unique_id``, ``ds``, ``step``, its parts and ``y_hat``; the parts
        (``attrs["parts"]``; ``model.account.STEP_PARTS``) add up to ``y_hat``, the median ``predict`` returns:
        ``history_x_network_weight`` (the points' shares summed: exact with ``"observations"``, integrated gradients
        from a flat history at the window's level with ``"states"``), ``window_level_x_network_weight`` (``"states"``:
        that level; windows whose scale fell back keep the network's part here) or
        ``step_and_statics_x_network_weight`` (``"observations"``: the head's step, calendar and statics term),
        ``covariates_x_network_weight`` (whole where the partners follow covariates; with ``"observations"`` through
        the head only), ``partners_weighted``, ``floor_at_zero``; and ``closed_step``, as above (docs/attention.md).

        The state design's shares take a gradient pass per step (docs/attention.md); ``predict`` after ``explain`` on the
        same inputs reuses its pass. With a Dask ``df``, a lazy Dask DataFrame of the point rows.
        """
        if by not in ("point", "step"):
            raise ValueError(f"`by` must be 'point' or 'step'; got {by!r}.")
        if is_dask_frame(df) or is_dask_frame(future_df):
            if by == "step":
                raise ValueError("`explain(by='step')` needs a pandas frame; explain a Dask frame by point.")
            return engine("dask.forecast_frames")(self, "explain", df, future_df, include_padding=include_padding)
        fitted, panel, tz, memo = self._source(df, future_df)
        forecast = self._forecast_ends(fitted, panel, memo, account=True)
        values = fitted.state.network.values
        return explanation(panel, forecast, self.id_col, self.time_col, tz, include_padding, by, values)

    def save(self, path) -> None:
        """Write the fitted model to directory ``path`` (refused, as predict is, after a change of what shaped it)."""
        self.fitted()
        save_model(self, path)

    @classmethod
    def load(cls, path) -> Seq2SeqForecaster:
        """Load a model written by :meth:`save`; never unpickles arbitrary objects."""
        return load_model(cls, path)
