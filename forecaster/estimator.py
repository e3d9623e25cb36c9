"""`Seq2SeqForecaster`: the scikit-learn-style facade over data preparation, the model and its partners.

It checks parameters (``model.params``), validates frames (``data.validation``), builds the
fitted state (``model.state``) and hands every forecast to the inference core
(``model.inference``) through the fitted model (``model.fitted.FittedModel``); it holds no forecasting logic of its own.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Sequence

import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .data.features import FeatureSpec
from .data.frequency import infer_offset, normalise_freq
from .data.panel import Panel
from .data.roles import CovariateRoles
from .data.validation import Columns, clean_future, clean_history
from .engines import engine, is_dask_frame
from .model.execute import run_plan
from .model.files.migration import unrecorded_blend
from .model.fitted import FittedModel, ForecastMemo
from .model.inference import Forecast, panel_digest
from .model.members import MemberTrainer
from .model.network import Ensemble
from .model.outputs import attention_frame, forecast_frame, quantile_column
from .model.params import NINE_LEVELS, blend_weights, changed_since_fit, check_params
from .model.plan import FitPlan, PanelFacts, plan_fit
from .model.prior import frame_windows, prior_for
from .model.resolve import resolve_units
from .model.state import FittedState
from .model.training import TrainResult

__all__ = ["Seq2SeqForecaster", "quantile_column"]


def _from_state(name: str, doc: str) -> property:
    return property(lambda self: getattr(self.state_, name), doc=doc)


class Seq2SeqForecaster(BaseEstimator):
    """Global attention encoder-decoder that forecasts every horizon step in one pass.

    One network is trained across all series of a long DataFrame (``unique_id``, ``ds``,
    ``y`` plus covariates). A bidirectional GRU/LSTM reads a per-window scaled history; each
    horizon step attends over all encoder states with its own query built from a step
    embedding, its future-known covariates, calendar features and statics. docs/model.md
    explains each default and the validation behind it.

    Parameters (all but ``horizon`` keyword-only):
        horizon: number of periods to forecast.
        input_size: history periods fed to the encoder; None gives ``max(horizon, 2 * season_length, 8)``.
        freq, season_length: pandas offset alias and periods per season; inferred when None.
        future_covariates: columns known in advance (decoder only).
        past_covariates: columns observed up to the origin (encoder only).
        static_covariates: columns constant per series (numeric or categorical).
        quantiles: levels to forecast (default the nine deciles 0.1, ..., 0.9); None gives point
            forecasts (MAE loss). Calibrated at fit on held-out windows, per horizon step: each level's
            offset from the median is scaled to its hit rate there, once the shift those windows share
            is taken out (with fewer than 30 series, mirrored levels share one factor).
        attention: ``"dot"`` (scaled dot-product) or ``"additive"``.
        attention_values: ``"states"`` (the default): attention averages encoder states and a head reads
            them; the most accurate, but its maps can point away from what drives the forecast
            (``explain`` splits its forecast over the history points by integrated gradients).
            ``"observations"`` (the faithful variant): the median is the attention-weighted average of the
            attended observations, each moved to the target by the long-run seasonal profile and trend line,
            plus a history-free effect of step, calendar, statics and future-known covariates, so each
            point's weight x value is its exact share of the forecast (``explain`` returns the account);
            0.5-1.3% less accurate on M3 and Tourism, 5% on the electricity study (mean of 3 seeds; docs/attention.md).
        hidden_size, num_layers, cell, dropout: network size (``cell`` is ``"gru"`` or ``"lstm"``).
        linear_skip: add a linear map from the scaled history to every step; None: on with state values,
            off with observation values (the trend line moves observations to the target instead).
        scaler: per-window target scaling, ``"standard"``, ``"robust"`` or ``"meanabs"``.
        loss_scale: ``"seasonal_naive"`` (errors over each series' MASE scale up to the origin, so
            training weighs series as MASE does) or ``"window"`` (window-scaled units).
        log_target: model ``log(1 + y)``; quantiles are mapped back exactly by ``expm1``.
        seasonal_profile: feed the long-run seasonal profile (5 seasons before the origin).
        trend_line: feed the long-run trend line; None: on where a season spans a year or more.
        theta_weight, holt_winters_weight: weights of the Theta method and damped Holt-Winters in
            the forecast, both fitted per series on the history up to the origin. None (the default):
            chosen at fit on held-out windows at the end of the training data: 0.25 each (0.15 with
            future-known covariates, which the partners cannot see), unless those windows show a partner
            clearly hurting (then 0; ``state_.calibration.blend``); a fit with future-known covariates and no
            held-out windows blends none in. Without future-known covariates, given weights with 0.25 for an
            unset one must sum to at most 1; with them, an unset one gets at most what keeps the sum within 1.
        max_steps: training steps; None derives them from the number of windows (0: see ``init``).
        batch_size, learning_rate: optimiser settings.
        early_stopping: hold out the last windows of every series (their last horizon, plus the
            origins calibration holds out) to pick the best step; None turns it on where the budget
            would pass over the windows more than 6 times.
        refit_on_full: after early stopping, retrain on every window for the best step count; the
            calibration then reads windows the final network has trained on.
        warm_start: ``fit`` continues from the current weights (which may have trained on windows the
            new fit holds out for calibration) when the fitted state is compatible
            (same roles, frequency, window, network and target units; new series and new categories
            of static covariates are fine), with a quarter of the step budget; otherwise it warns and
            fits from scratch. As in scikit-learn, False fits from scratch every time.
        init: where a fit starts. ``"auto"`` (the default): from the shipped prior (docs/prior.md) for a small panel
            without covariates (at most 4,000 rows beyond one horizon per series) of a frequency a prior serves
            (yearly, quarterly, monthly) with the prior's architecture, when the fit is not a warm start; from
            random weights otherwise. From the prior, ``max_steps`` None takes no training step: the prior is kept
            as it is and its blend and intervals are calibrated on held-out windows. On the validation suite this
            gave small panels MASE 0.945x AutoETS at 0.19x its time with the prior's three members (one member:
            0.965x; from scratch: 1.034x), while larger panels did better from scratch (0.953x against 0.969x).
            ``"scratch"``: random weights.
            ``"pretrained"``: always the prior, fine-tuned with a hundredth of the learning rate for its weights and
            a quarter of the steps, the held-out windows scored from step 0, so the prior itself may win; covariates
            it never saw start with zero weights and learn at the full rate. ``input_size`` None takes the prior's;
            the architecture parameters must be the prior's. With ``max_steps=0`` the fit keeps the prior as it is
            (no training, no calibration: :meth:`from_pretrained`). ``init_`` says how the last fit started
            (``"pretrained"``, ``"scratch"`` or ``"warm start"``); model files record it, so a loaded model reports it
            too (None for files written before they recorded it).
        fill_gaps: accept missing periods and mask them instead of raising.
        nonnegative: floor the median and every quantile at zero. None (the default): for each series whose observed
            history up to the origin is never negative (counts, sales, demand), so such a series never gets a
            negative forecast; True: every series; False: never. Quantiles stay ordered; a forecast lifted to zero
            keeps the lift as its own part in ``explain(by="step")`` (``floor_at_zero``). The rule the fit took is
            ``nonnegative_``, saved with the model (files written before it floor nothing).
        id_col, time_col, target_col: column names of the long frame.
        n_models: ensemble members (seeds ``random_state + k``); forecasts are their median (mean for observations).
            None (the default): one member per member of the prior when a fit starts from one (three, one per
            pretraining seed: member k starts from the prior's member k), else one; a warm start keeps its count.
            A number from a prior takes its members in turn; without training steps, more than the prior's three
            only repeat members (the median then leans toward the repeated ones), so ask for more only to fine-tune.
        n_jobs: worker processes that train members in parallel (one torch thread each).
        device: ``"auto"`` (CUDA when available), ``"cpu"`` or ``"cuda"``.
        num_threads: torch CPU threads during fit/predict; None keeps torch's setting.
        progress: show a progress bar while training.
        random_state: seed; the same seed gives identical forecasts on CPU.

    Fitted attributes: ``state_`` (:class:`~forecaster.model.state.FittedState`), ``network_``,
    ``train_results_``, ``fit_plan_`` (:class:`~forecaster.model.plan.FitPlan`: where the fit started, its members and
    seeds, step budget and steps, rates, what it calibrated and why it started elsewhere than it could have; saved with
    the model, None for a file written before files saved it), and shortcuts to the state (``freq_``,
    ``season_length_``, ``history_``, ...); :meth:`fitted` hands them out together
    (:class:`~forecaster.model.fitted.FittedModel`, which forecasts from any origins), as the backtest and the
    scale-out paths use them.

    ``predict`` and ``explain`` never fit and never change the estimator's attributes; only ``fit`` (and ``load``)
    does. A model from :meth:`from_pretrained` forecasts any panel it is given without becoming fitted to it.
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
        max_steps: int | None = None,
        batch_size: int = 128,
        learning_rate: float = 3e-3,
        early_stopping: bool | None = None,
        refit_on_full: bool = False,
        warm_start: bool = False,
        init: str = "auto",
        fill_gaps: bool = False,
        nonnegative: bool | None = None,
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
        params = dict(locals())
        del params["self"]
        for name, value in params.items():  # stored as given, checked at fit (scikit-learn's convention)
            setattr(self, name, value)

    freq_ = _from_state("freq", "Frequency of the training data (pandas alias).")
    season_length_ = _from_state("season_length", "Periods per season.")
    input_size_ = _from_state("input_size", "History periods the encoder reads.")
    nonnegative_ = _from_state("nonnegative", "Which forecasts are floored at zero (``resolve.FLOOR_RULES``).")
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

    # ------------------------------------------------------------------ parameters
    def _columns(self) -> Columns:
        return Columns.from_params(self.get_params())

    def _roles(self) -> CovariateRoles:
        return CovariateRoles.from_params(self.get_params())

    def _blend_weights(self, state: FittedState | None = None) -> dict[str, float]:
        """Each partner's weight (``theta_weight``, ``holt_winters_weight``) resolved; None ones as chosen at fit.

        Every fit records its blend; a model file without one (from a fit without held-out windows, or a prior
        written by ``forecaster.pretraining``) forecasts with the weights its fit resolved (``files.migration``).
        """
        state = getattr(self, "state_", None) if state is None else state
        if state is not None and state.calibration is None:
            return unrecorded_blend(self.get_params())
        return blend_weights(self.get_params(), None if state is None else state.calibration.blend)

    # ------------------------------------------------------------------ the fitted model
    def fitted(self) -> FittedModel:
        """The fitted model as the package's modules use it (state, network, device; forecasts at any origins).

        Raises:
            NotFittedError: the model has not been fitted.
            ValueError: a parameter that shapes the forecasts changed since the fit.
        """
        check_is_fitted(self, "network_")
        self._check_unchanged()
        return self._fitted_model()

    def _fitted_model(self, state: FittedState | None = None, network: Ensemble | None = None, device=None) -> FittedModel:
        """The fitted model of the estimator's fit, or of the fit of ``state``, ``network`` and ``device``."""
        if state is None:
            state, network, device = self.state_, self.network_, self.device_
        return FittedModel(
            state,
            network,
            device,
            self._blend_weights(state),
            self._columns(),
            self.horizon,
            self.fill_gaps,
            self.num_threads,
        )

    def set_fitted(self, state: FittedState, network: Ensemble, device, results: list[TrainResult]) -> Seq2SeqForecaster:
        """Adopt a fit's outcome (``fit``, ``load`` and the scale-out paths all end here); returns ``self``.

        The learned attributes are written together, and the parameters they were fitted with recorded, so that a
        forecast refuses parameters changed since (``predict``) and never reuses a pass of an earlier fit.
        """
        self.state_, self.network_, self.device_, self.train_results_ = state, network, device, results
        self.init_ = state.init  # how the weights were started; a loaded model reports it as its file recorded it
        self._fitted_params, self._cache = copy.deepcopy(self.get_params()), ForecastMemo()
        return self

    # ------------------------------------------------------------------ fit
    def fit(self, df: pd.DataFrame, y: object = None) -> Seq2SeqForecaster:
        """Train one network on every series of ``df``; returns ``self``.

        ``df`` holds ``unique_id``, ``ds``, ``y`` and the declared covariate columns
        (future-known covariates with their historical values). NaN targets are masked.
        A Dask DataFrame is fitted on training windows of every series drawn on the workers
        (``forecaster.scale.dask_fit``; as a whole frame when its windows are few enough).
        """
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
        """Fit on a frame that ``clean_history`` already validated; returns the panel the fit built.

        The package's own way in (users call :meth:`fit`, which validates first): nothing here checks the frame again.
        It makes the fit's plan (``model.plan.plan_fit``), warns with its notes, runs it (``model.execute.run_plan``)
        and adopts the fit. The backtest calls this once per refitted fold, then forecasts from the same panel
        (``fitted().forecast_at``). ``train_members(job, seeds, initial)`` trains the members instead of
        ``fit_members`` (``forecaster.scale.distributed`` passes one that trains each across processes).
        ``features`` and ``n_windows``: the covariate encodings and training windows of a whole panel
        of which ``frame`` is a sample (``forecaster.scale.window_stream`` streams the training windows from
        every partition and fits the rest on the sample), and ``offset`` its frequency; by default all come from ``frame``.
        """
        params = self.get_params()
        check_params(params)
        previous = (self.state_, self.network_) if hasattr(self, "network_") else None
        facts = self._facts(frame, n_windows, offset)
        plan = plan_fit(params, facts, None if previous is None else (previous[0], previous[1].config))
        for note in plan.notes:
            warnings.warn(note, UserWarning, stacklevel=3)
        fit = run_plan(plan, facts, frame, tz, params, previous, train_members, features)
        # Learned state is assigned only once training has finished, so an interrupted
        # fit never leaves a half-updated estimator behind.
        self.set_fitted(fit.state, fit.network, fit.device, fit.results)
        return fit.panel

    def _facts(self, frame: pd.DataFrame, n_windows: int | None = None, offset: pd.DateOffset | None = None) -> PanelFacts:
        """What the plan of a fit on ``frame`` needs to know of it (``n_windows``, ``offset``: of the whole panel)."""
        columns = self._columns()
        if offset is None:
            offset = normalise_freq(self.freq) if self.freq is not None else infer_offset(frame[columns.time], frame[columns.id])
        rows = n_windows if n_windows is not None else frame_windows(frame, columns, self.horizon)
        return PanelFacts(offset, self._roles(), rows, n_windows)

    @property
    def fit_plan_(self) -> FitPlan | None:
        """How the last fit was planned and run (``model.plan.FitPlan``): where it started, its members and seeds, its
        step budget and steps, rates, what it calibrated, and why it started elsewhere than it could have.

        A loaded model reports the plan its file saved; None for a file written before files saved it.
        """
        check_is_fitted(self, "network_")
        return None if self.state_.plan is None else FitPlan.from_dict(self.state_.plan)

    @classmethod
    def from_pretrained(cls, horizon: int, **params) -> Seq2SeqForecaster:
        """A model that forecasts any panel with the shipped prior, without fitting (docs/prior.md).

        ``predict(df=...)`` and ``explain(df=...)`` infer the frequency of ``df`` (or use ``freq``), pick the prior
        that serves it (yearly, quarterly or monthly data, horizons up to 48) and forecast from the target alone:
        the network's own quantiles, the statistical partners at their default weights. They leave the model as it
        was (no fitted attributes, so each panel is forecast on its own); ``fit(df)`` takes no training step and
        keeps the prior set up for ``df`` (its frequency, history tail and ``fit_plan_``) for ``predict()`` without
        data and for ``save``. The same model is
        ``Seq2SeqForecaster(horizon, init="pretrained", max_steps=0, **params)``, so a backtest (which fits a copy
        per fold) scores exactly these forecasts. Covariates need a fit: use ``init="pretrained"`` and ``fit``.

        Raises:
            ValueError: covariates are declared, or a parameter differs from the prior's
                (:class:`~forecaster.model.prior.PriorUnavailableError`, naming it).
        """
        if params.get("future_covariates") or params.get("past_covariates") or params.get("static_covariates"):
            raise ValueError(
                "from_pretrained forecasts from the target alone; to use covariates, fit "
                "Seq2SeqForecaster(horizon, init='pretrained', ...) on your panel (it fine-tunes the prior)."
            )
        model = cls(horizon, **{**params, "init": "pretrained", "max_steps": 0})
        check_params(model.get_params())
        if model.freq is not None:  # fail now, not at the first forecast, when no prior serves the frequency
            offset = normalise_freq(model.freq)
            prior_for(offset, model.get_params(), {**resolve_units(model.get_params(), offset), "input_size": model.input_size})
        model._follows_data = True
        return model

    def _zero_shot(self, df: pd.DataFrame | None, future_df: pd.DataFrame | None) -> tuple[FittedModel, Panel, str | None]:
        """For a model from :meth:`from_pretrained`: the prior set up for the frequency and series of ``df``.

        Returns it as a fitted model of its own (the estimator is left as it was), the panel of ``df`` it built (no
        future-known covariates: a prior reads none; ``future_df`` is still checked) and the zone of ``df``.
        """
        if df is None:
            raise ValueError(
                "A model from `from_pretrained` has no series of its own: pass the history to forecast, predict(df=...)."
            )
        params, columns = self.get_params(), self._columns()
        check_params(params)
        frame, tz = clean_history(df, columns, self._roles())
        facts = self._facts(frame)
        plan = plan_fit(params, facts)
        for note in plan.notes:
            warnings.warn(note, UserWarning, stacklevel=4)
        fit = run_plan(plan, facts, frame, tz, params)
        if future_df is not None:  # no targets or past covariates in it
            clean_future(future_df, columns, fit.state.roles, tz)
        return self._fitted_model(fit.state, fit.network, fit.device), fit.panel, tz

    # ------------------------------------------------------------------ predict
    def _check_unchanged(self) -> None:
        """Refuse to forecast with parameters other than those the model was fitted with (see ``TRAINING_ONLY``)."""
        changed = changed_since_fit(getattr(self, "_fitted_params", None) or self.get_params(), self.get_params())
        if changed:
            what = "; ".join(f"`{name}` fitted with {old!r}, now {new!r}" for name, (old, new) in changed.items())
            raise ValueError(f"Parameters changed after fit ({what}). Refit the model, or set them back.")

    def _source(self, df: pd.DataFrame | None, future_df: pd.DataFrame | None):
        """The fitted model to forecast with, the panel to forecast, its zone, and the memo of the model's last pass
        (None for a zero-shot forecast: a model from :meth:`from_pretrained` given ``df``, which it does not keep)."""
        if getattr(self, "_follows_data", False) and (df is not None or not hasattr(self, "network_")):
            return (*self._zero_shot(df, future_df), None)
        check_is_fitted(self, "network_")
        self._check_unchanged()
        state, columns = self.state_, self._columns()
        frame, tz = (state.history, state.tz) if df is None else clean_history(df, columns, state.roles)
        if state.roles.future and future_df is None:
            raise ValueError(
                f"`future_df` is required: the model uses future-known covariates {list(state.roles.future)} "
                f"for the {self.horizon} periods after each series' end."
            )
        # Without future-known covariates a future frame is still checked: no targets or past covariates in it.
        future = None if future_df is None else clean_future(future_df, columns, state.roles, tz)
        future = future if state.roles.future else None
        fitted = self._fitted_model()
        return fitted, fitted.panel(frame, future), tz, getattr(self, "_cache", None)

    @staticmethod
    def _forecast_ends(fitted: FittedModel, panel: Panel, memo: ForecastMemo | None, account: bool = False) -> Forecast:
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

    def predict(self, df: pd.DataFrame | None = None, future_df: pd.DataFrame | None = None) -> pd.DataFrame:
        """Forecast ``horizon`` periods after the end of each series.

        Args:
            df: history to forecast from; None uses the training series. Series unseen
                in training are allowed.
            future_df: future-known covariates for the horizon (required when the model has any).

        Returns:
            One row per series and step: ``unique_id``, ``ds``, ``y_hat`` (the median) and
            one ``y_hat_q..`` column per requested quantile. A lazy Dask DataFrame when ``df`` is one
            (``forecaster.scale.dask_frames``; ``future_df`` may then be Dask or pandas).
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

        ``by="point"`` (the default): attention weights of each horizon step over the history, in long format, with
        columns ``unique_id``, ``ds`` (target time), ``step`` (1..horizon), ``ds_history`` (attended time), ``lag``
        (periods from the attended time to the origin; 0 is the origin) and ``weight``. Padded positions (before a
        series starts) get exactly zero weight and are omitted, or kept and flagged in a ``padded`` column with
        ``include_padding=True`` (their ``ds_history`` is the calendar period they would have had). The weights of
        each (series, step) sum to one (with ``attention_values="observations"``, zero where a window holds no
        observed target: an ``EmptyWindowWarning`` names such series). Beside them (none with ``log_target``),
        ``contribution``: each history point's share of the median forecast, the network's blend weight applied.
        Summed over a (series, step)'s rows, the shares are its ``history_x_network_weight`` below. The columns
        ``step_baseline``, ``step_covariates``, ``step_partners``, ``step_head`` and ``y_hat`` repeat a step's parts
        on each of its history rows (summing them over rows means nothing); they are kept for one release for code
        that reads them, and ``by="step"`` is the frame to read.

        ``by="step"``: one row per (series, step), ``unique_id``, ``ds``, ``step``, its parts and ``y_hat``; the parts
        (``attrs["parts"]``) add up to ``y_hat``, the median ``predict`` returns:

        - ``history_x_network_weight``: the history points' shares, summed. With ``attention_values="observations"``
          exact by construction (weight x observation, plus its seasonal and trend adjustment and its linear-skip
          term); with ``"states"`` (the default) each point's integrated-gradients share of what the network adds to
          the window's level, along the path from a flat history at that level.
        - ``window_level_x_network_weight`` (``"states"``): the window's level, where that path starts, times the
          network's blend weight (1 less the partners' weights: 0.5 x the level with the default partners); windows
          whose scale fell back, such as constant ones, have no shares and keep the network's part here.
          ``step_and_statics_x_network_weight`` (``"observations"``): the head's step, calendar and statics term and
          the unattended level, times the network's blend weight.
        - ``covariates_x_network_weight``: the future-known covariates' effect against their training mean.
        - ``partners_weighted``: the statistical partners' forecasts times their blend weights.
        - ``floor_at_zero``: what lifted a negative median to zero (``nonnegative``); 0 where nothing was lifted.

        The shares of the state design take a gradient pass per horizon step: ``explain`` costs several ``predict``
        calls (docs/attention.md). ``predict`` after ``explain`` on the same inputs reuses its pass. With a Dask
        ``df``, a lazy Dask DataFrame of the point rows (as ``predict``); ``by="step"`` needs a pandas frame.
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
        frame = attention_frame(panel, forecast, self.id_col, self.time_col, tz, include_padding or by == "step", values)
        if by == "point":
            return frame
        if "contribution" not in frame:
            raise ValueError("No account with log_target: its parts would add up to the log of the forecast.")
        from .model.account import step_account

        return step_account(frame, self.id_col, self.time_col, values)

    # ------------------------------------------------------------------ model files
    def save(self, path) -> None:
        """Write the fitted model to directory ``path`` (JSON config with the fitted state, weights, history tail)."""
        from .model.files import save_model

        check_is_fitted(self, "network_")
        save_model(self, path)

    @classmethod
    def load(cls, path) -> Seq2SeqForecaster:
        """Load a model written by :meth:`save`; never unpickles arbitrary objects."""
        from .model.files import load_model

        return load_model(cls, path)
