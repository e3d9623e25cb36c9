"""`Seq2SeqForecaster`: the scikit-learn-style estimator that wires the modules together."""

from __future__ import annotations

import contextlib
import numbers
import reprlib
from collections.abc import Iterator, Sequence

import numpy as np
import pandas as pd
import torch
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from .data.decomposition import DecompositionTable, history_needed
from .data.features import fit_features, static_width
from .data.frequency import infer_offset, normalise_freq, season_length_for, season_spans_a_year
from .data.panel import Panel, build_panel, future_timestamps, log_target, with_decomposition
from .data.roles import CovariateRoles
from .data.scaling import LOSS_SCALES, SCALERS, naive_error_table
from .data.validation import Columns, clean_future, clean_history, restore_zone
from .data.windows import admissible_origins, assemble
from .model.attention import ATTENTIONS
from .model.members import TrainingJob, fit_members
from .model.network import Ensemble, NetworkConfig
from .model.training import TrainConfig, to_tensors
from .partners.blend import PARTNERS, blend_quantiles, partner_forecasts


def quantile_column(q: float) -> str:
    """Column name of a quantile forecast: 0.1 -> 'y_hat_q10', 0.975 -> 'y_hat_q97.5'."""
    return f"y_hat_q{round(100 * q, 6):g}"


@contextlib.contextmanager
def _torch_threads(n: int | None) -> Iterator[None]:
    previous = torch.get_num_threads()
    if n:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def default_input_size(horizon: int, season_length: int) -> int:
    """History length used when `input_size` is None: one horizon or two seasons, whichever is longer (at least 8).

    Chosen by rolling-origin validation on the training parts of Tourism quarterly and
    M3 monthly (see benchmarks/README.md): longer windows (2 horizons, 3 seasons) were
    no better on Tourism and worse on M3 (mean MASE 0.978 with 36 vs 0.960 with 24).
    """
    return int(max(horizon, 2 * season_length, 8))


def default_max_steps(n_windows: int, batch_size: int) -> int:
    """Training steps used when `max_steps` is None: about two passes over the windows, 300 to 1500 steps.

    Chosen by rolling-origin validation on the Tourism quarterly training part (mean MASE 1.995,
    1.970, 1.986 and 2.005 for 1, 2, 3 and 4 passes, two seeds for 2-4; benchmarks/README.md):
    more passes overfit. M3 monthly hits the 1500-step cap at 1.8 passes.
    """
    return int(np.clip(2 * n_windows // batch_size, 300, 1500))


# Passes over the training windows beyond which an automatic early stopping switches on.
AUTO_EARLY_STOPPING_PASSES = 6


def use_early_stopping(early_stopping: bool | None, max_steps: int, batch_size: int, n_windows: int) -> bool:
    """Whether to hold out the last horizon for early stopping; None decides from the planned passes over the data."""
    if early_stopping is not None:
        return bool(early_stopping)
    return max_steps * batch_size > AUTO_EARLY_STOPPING_PASSES * n_windows


class Seq2SeqForecaster(BaseEstimator):
    """Global attention encoder-decoder that forecasts every horizon step in one pass.

    One network is trained across all series of a long DataFrame (``unique_id``,
    ``ds``, ``y`` plus covariates). A bidirectional GRU/LSTM reads a per-window scaled
    history; each horizon step attends over all encoder states with its own query built
    from a step embedding, its future-known covariates, calendar features and statics.

    Parameters:
        horizon: number of periods to forecast.
        input_size: history periods fed to the encoder; None gives
            ``max(horizon, 2 * season_length, 8)``.
        freq: pandas offset alias; inferred from the data when None.
        season_length: inferred from ``freq`` when None (12 monthly, 4 quarterly, 7 daily...).
        future_covariates: columns known in advance (decoder only).
        past_covariates: columns observed up to the origin (encoder only).
        static_covariates: columns constant per series (numeric or categorical).
        quantiles: quantile levels to forecast; None gives point forecasts (MAE loss).
        attention: ``"dot"`` (scaled dot-product) or ``"additive"``.
        hidden_size, num_layers, cell, dropout: network size (``cell`` is ``"gru"`` or ``"lstm"``).
        linear_skip: add a linear map from the scaled history to every horizon step, which
            extrapolates trends that a convex attention average cannot (on by default; turn
            it off when the sharpest attention maps matter more than accuracy).
        scaler: per-window target scaling, ``"standard"``, ``"robust"`` or ``"meanabs"``.
        loss_scale: units of the training loss: ``"window"`` (errors in the window's scaled
            units) or ``"seasonal_naive"`` (errors relative to each series' in-sample
            seasonal-naive error up to the origin, the MASE denominator; the default, so
            training weighs series as the MASE evaluation does). With ``log_target`` both
            are measured on the log scale.
        log_target: model ``log(1 + y)`` (non-negative series with multiplicative trend or
            seasonality); quantiles are mapped back exactly by ``expm1``.
        seasonal_profile: give encoder and decoder the series' long-run seasonal profile: the
            mean deviation of each season position from a centred moving average over up to
            5 seasons before the origin (as classical decomposition estimates it; additive, and
            multiplicative at the current level), so a short ``input_size`` still sees a stable
            seasonal pattern. Computed from data up to the origin only; needs ``season_length >= 2``.
        trend_line: give encoder and decoder the series' long-run trend line: the latest value
            of that centred moving average known at the origin, extrapolated with its slope over
            up to 10 seasons (a deseasonalised drift, as the Theta method's). Computed from
            data up to the origin only. None (the default) turns it on when a season spans a
            year or more (yearly, quarterly, monthly, weekly data), where 10 seasons are a long
            run; off for daily or hourly data, where a 10-week or 10-day drift is mostly weather
            or events and extrapolating it hurt.
        theta_weight: weight of the Theta method's forecast (the model of statsforecast's
            ``Theta``) in the final forecast. Like ``holt_winters_weight``, it blends in a
            per-series statistical model fitted on the history the model keeps of each series,
            up to the origin, all series at once: the median becomes ``(1 - w_theta - w_hw) *
            network + w_theta * theta + w_hw * holt_winters`` and every quantile moves with it.
            None (the default) gives 0.15 when the model has no future-known covariates and 0
            when it has some (the statistical models cannot see them and would damp their
            effect); 0 for both forecasts with the network alone. Series with under 4
            observations get the network's forecast.
        holt_winters_weight: weight of damped Holt-Winters exponential smoothing (level, trend
            and seasonal pattern evolving; damped trend or none, on the original or the log
            scale, chosen per series by AIC; see ``holt_winters.py``). None (the default) gives
            0.15 without future-known covariates and 0 with them. The two weights must sum to
            at most 1.
        max_steps: training steps; None derives them from the number of windows.
        batch_size, learning_rate: optimiser settings.
        early_stopping: hold out the last horizon of every series (in time) to pick the best step.
            None (the default) decides from the data: on when the training budget would pass
            over the windows more than 6 times (small panels, where the model would overfit),
            off otherwise, so that on larger panels the most recent targets train the model.
        refit_on_full: after early stopping, retrain from the same seed on every window (the
            held-out horizon included) for the best step count; about twice the training time.
        fill_gaps: accept missing periods and mask them instead of raising.
        n_models: ensemble members (seeds ``random_state + k``); forecasts are their median.
        n_jobs: worker processes that train members in parallel (one torch thread each).
        device: ``"auto"`` (CUDA when available), ``"cpu"`` or ``"cuda"``.
        num_threads: torch CPU threads during fit/predict; None keeps torch's setting.
        progress: show a progress bar while training.
        random_state: seed; the same seed gives identical forecasts on CPU.
    """

    def __init__(
        self,
        horizon: int,
        input_size: int | None = None,
        freq: str | None = None,
        season_length: int | None = None,
        future_covariates: Sequence[str] = (),
        past_covariates: Sequence[str] = (),
        static_covariates: Sequence[str] = (),
        quantiles: Sequence[float] | None = (0.1, 0.5, 0.9),
        attention: str = "dot",
        hidden_size: int = 64,
        num_layers: int = 1,
        cell: str = "gru",
        dropout: float = 0.1,
        linear_skip: bool = True,
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
        fill_gaps: bool = False,
        id_col: str = "unique_id",
        time_col: str = "ds",
        target_col: str = "y",
        n_models: int = 1,
        n_jobs: int = 1,
        device: str = "auto",
        num_threads: int | None = 1,
        progress: bool = True,
        random_state: int = 0,
    ):
        self.horizon = horizon
        self.input_size = input_size
        self.freq = freq
        self.season_length = season_length
        self.future_covariates = future_covariates
        self.past_covariates = past_covariates
        self.static_covariates = static_covariates
        self.quantiles = quantiles
        self.attention = attention
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.cell = cell
        self.dropout = dropout
        self.linear_skip = linear_skip
        self.scaler = scaler
        self.loss_scale = loss_scale
        self.log_target = log_target
        self.seasonal_profile = seasonal_profile
        self.trend_line = trend_line
        self.theta_weight = theta_weight
        self.holt_winters_weight = holt_winters_weight
        self.max_steps = max_steps
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.early_stopping = early_stopping
        self.refit_on_full = refit_on_full
        self.fill_gaps = fill_gaps
        self.id_col = id_col
        self.time_col = time_col
        self.target_col = target_col
        self.n_models = n_models
        self.n_jobs = n_jobs
        self.device = device
        self.num_threads = num_threads
        self.progress = progress
        self.random_state = random_state

    # ------------------------------------------------------------------ parameters
    def _check_params(self) -> None:
        def positive_int(name: str, allow_none: bool = False) -> None:
            value = getattr(self, name)
            if value is None and allow_none:
                return
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
                raise ValueError(f"`{name}` must be a positive integer; got {value!r}.")

        positive_int("horizon")
        positive_int("input_size", allow_none=True)
        positive_int("season_length", allow_none=True)
        positive_int("hidden_size")
        positive_int("num_layers")
        positive_int("max_steps", allow_none=True)
        positive_int("batch_size")
        positive_int("num_threads", allow_none=True)
        positive_int("n_models")
        positive_int("n_jobs")
        choices = {
            "attention": tuple(ATTENTIONS),
            "cell": ("gru", "lstm"),
            "scaler": SCALERS,
            "loss_scale": LOSS_SCALES,
            "device": ("auto", "cpu", "cuda"),
        }
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"`{name}` must be one of {allowed}; got {getattr(self, name)!r}.")
        if not 0.0 <= float(self.dropout) < 1.0:
            raise ValueError(f"`dropout` must be in [0, 1); got {self.dropout!r}.")
        for name in PARTNERS:
            weight = getattr(self, name)
            if weight is not None and not 0.0 <= float(weight) <= 1.0:
                raise ValueError(f"`{name}` must be in [0, 1] or None; got {weight!r}.")
        if sum(self._blend_weights().values()) > 1.0:
            raise ValueError(f"`theta_weight` and `holt_winters_weight` must sum to at most 1; got {self._blend_weights()}.")
        if not float(self.learning_rate) > 0.0:
            raise ValueError(f"`learning_rate` must be positive; got {self.learning_rate!r}.")
        if self.quantiles is not None:
            qs = list(self.quantiles)
            if not qs or any(not 0.0 < float(q) < 1.0 for q in qs) or len(set(qs)) != len(qs):
                raise ValueError(f"`quantiles` must be distinct levels strictly between 0 and 1; got {qs!r}.")
        if self.device == "cuda" and not torch.cuda.is_available():
            raise ValueError("`device`='cuda' but CUDA is not available; use device='auto' or 'cpu'.")

    def _columns(self) -> Columns:
        return Columns(self.id_col, self.time_col, self.target_col)

    def _roles(self) -> CovariateRoles:
        return CovariateRoles.from_arguments(
            self.future_covariates,
            self.past_covariates,
            self.static_covariates,
            reserved=(self.id_col, self.time_col, self.target_col),
        )

    def _training_quantiles(self) -> tuple[float, ...]:
        if self.quantiles is None:
            return (0.5,)
        return tuple(sorted({float(q) for q in self.quantiles} | {0.5}))

    # ------------------------------------------------------------------ fit
    def fit(self, df: pd.DataFrame, y: object = None) -> Seq2SeqForecaster:
        """Train one network on every series of ``df``; returns ``self``.

        ``df`` holds ``unique_id``, ``ds``, ``y`` and the declared covariate columns
        (future-known covariates with their historical values). NaN targets are masked.
        """
        self._check_params()
        columns, roles = self._columns(), self._roles()
        frame, tz = clean_history(df, columns, roles)
        offset = normalise_freq(self.freq) if self.freq is not None else infer_offset(frame[columns.time], frame[columns.id])
        season = int(self.season_length or season_length_for(offset))
        input_size = int(self.input_size or default_input_size(self.horizon, season))
        features = fit_features(frame, columns.id, roles)
        panel = build_panel(frame, columns, roles, features, offset, input_size, self.horizon, fill_gaps=self.fill_gaps)
        panel = self._model_units(panel, offset, season)
        self._check_lengths(panel)
        quantiles = self._training_quantiles()
        config = NetworkConfig(
            input_size=input_size,
            horizon=self.horizon,
            past_features=panel.encoder_features,
            future_features=panel.decoder_features,
            static_features=static_width(roles.static, features),
            n_outputs=len(quantiles),
            median_index=quantiles.index(0.5),
            hidden_size=self.hidden_size,
            num_layers=self.num_layers,
            dropout=float(self.dropout),
            cell=self.cell,
            attention=self.attention,
            skip=bool(self.linear_skip),
        )
        device = (
            "cuda" if self.device == "auto" and torch.cuda.is_available() else ("cpu" if self.device == "auto" else self.device)
        )
        job = self._training_job(panel, roles, config, quantiles, device, season)
        seeds = [self.random_state + k for k in range(self.n_models)]
        results = fit_members(job, seeds, self.n_jobs)
        network = Ensemble(config, len(results)).to(device)
        for member, result in zip(network.members, results, strict=True):
            member.load_state_dict(result.state_dict)
        network.eval()
        # Learned state is assigned only once training has finished, so an interrupted
        # fit never leaves a half-updated estimator behind.
        self.freq_ = offset.freqstr
        self.season_length_ = season
        self.input_size_ = input_size
        self.roles_ = roles
        self.features_ = features
        self.quantiles_ = quantiles
        self.network_config_ = config
        self.device_ = device
        self.tz_ = tz
        kept = self._history_kept(input_size, panel.decomposition)
        self.history_ = frame.groupby(columns.id, sort=False).tail(kept).reset_index(drop=True)
        self.training_end_ = frame.groupby(columns.id, sort=False)[columns.time].max()
        self.train_results_ = results
        self.train_result_ = results[0]
        self.network_ = network
        return self

    def _check_lengths(self, panel: Panel) -> None:
        short = panel.length < self.horizon
        if short.any():
            raise ValueError(
                f"Series {reprlib.repr(list(panel.ids[short]))} are shorter than one horizon "
                f"({self.horizon} periods); drop them or lower `horizon`."
            )

    def _training_job(
        self, panel: Panel, roles: CovariateRoles, config: NetworkConfig, quantiles, device: str, season_length: int
    ) -> TrainingJob:
        """Training windows (all admissible origins) and, with early stopping, the last horizon held out in time."""
        input_size, horizon = config.input_size, config.horizon
        min_history = max(1, min(input_size, horizon) // 2)
        end_col = np.full(len(panel.ids), panel.last_col)
        validation = None
        naive_table = naive_error_table(panel.y, season_length) if self.loss_scale == "seasonal_naive" else None
        series, origins = all_series, all_origins = admissible_origins(panel, input_size, horizon, end_col, min_history)
        max_steps = self.max_steps or default_max_steps(len(all_series), self.batch_size)
        if use_early_stopping(self.early_stopping, max_steps, self.batch_size, len(all_series)):
            t_series, t_origins = admissible_origins(panel, input_size, horizon, end_col - horizon, min_history)
            at_end = all_origins == panel.last_col - horizon
            if len(t_series) and at_end.any():
                series, origins = t_series, t_origins
                validation = assemble(
                    panel, roles, all_series[at_end], all_origins[at_end], input_size, horizon, self.scaler, True, naive_table
                )
        if len(series) == 0:
            raise ValueError("No training window fits in the data: the series are too short for `horizon`; lower it.")
        train_config = TrainConfig(
            max_steps=max_steps,
            batch_size=self.batch_size,
            learning_rate=float(self.learning_rate),
            quantiles=quantiles,
            early_stopping=validation is not None,
            progress=self.progress,
            device=device,
        )
        refit = self.refit_on_full and validation is not None
        return TrainingJob(
            panel,
            roles,
            series,
            origins,
            validation,
            config,
            train_config,
            self.scaler,
            self.num_threads,
            full_series=all_series if refit else None,
            full_origins=all_origins if refit else None,
            naive_table=naive_table,
        )

    # ------------------------------------------------------------------ predict
    def _panel_for(self, df: pd.DataFrame | None, future_df: pd.DataFrame | None) -> tuple[Panel, str | None]:
        check_is_fitted(self, "network_")
        columns, roles = self._columns(), self.roles_
        if df is None:
            frame, tz = self.history_, self.tz_
        else:
            frame, tz = clean_history(df, columns, roles)
        future = None
        if roles.future:
            if future_df is None:
                raise ValueError(
                    f"`future_df` is required: the model uses future-known covariates {list(roles.future)} "
                    f"for the {self.horizon} periods after each series' end."
                )
            future = clean_future(future_df, columns, roles, tz)
        elif future_df is not None:
            clean_future(future_df, columns, roles, tz)  # still refuse targets or past covariates in it
        offset = normalise_freq(self.freq_)
        panel = build_panel(frame, columns, roles, self.features_, offset, self.input_size_, self.horizon, future, self.fill_gaps)
        return self._model_units(panel, offset, self.season_length_), tz

    def _uses_trend_line(self, offset: pd.DateOffset, season_length: int) -> bool:
        """``trend_line`` resolved: None means on where a season spans a year or more."""
        return season_spans_a_year(offset, season_length) if self.trend_line is None else bool(self.trend_line)

    def _model_units(self, panel: Panel, offset: pd.DateOffset, season_length: int) -> Panel:
        """The panel in the units the network models: ``log1p`` target, trend line and seasonal profile when enabled."""
        if self.log_target:
            panel = log_target(panel, self.target_col)
        return with_decomposition(panel, season_length, self.seasonal_profile, self._uses_trend_line(offset, season_length))

    def _blend_weights(self) -> dict[str, float]:
        """Each partner's weight (``theta_weight``, ``holt_winters_weight``) resolved.

        None means the partner's default without future-known covariates and 0 with them.
        """
        future = bool(self._roles().future)
        weights = {name: getattr(self, name) for name in PARTNERS}
        return {
            name: float(weight) if weight is not None else (0.0 if future else PARTNERS[name].default_weight)
            for name, weight in weights.items()
        }

    def _blend_partners(self, panel: Panel, values: np.ndarray) -> np.ndarray:
        """Network quantiles (N, H, Q) combined with the statistical partners' forecasts (see ``theta_weight``)."""
        weights = {name: weight for name, weight in self._blend_weights().items() if weight > 0.0}
        if not weights:
            return values
        targets = np.expm1(panel.y) if self.log_target else panel.y
        history = self._history_kept(self.input_size_, panel.decomposition)
        fits = [PARTNERS[name].fit for name in weights]
        partners = partner_forecasts(fits, targets, panel.first_col, panel.last_col, self.horizon, self.season_length_, history)
        return blend_quantiles(values, partners, list(weights.values()), self.quantiles_.index(0.5))

    @staticmethod
    def _history_kept(input_size: int, decomposition: DecompositionTable | None) -> int:
        """Periods per series kept for ``predict()`` without data: the encoder window and what the decomposition reads."""
        return input_size if decomposition is None else max(input_size, history_needed(decomposition))

    def _forward(self, panel: Panel) -> tuple[np.ndarray, np.ndarray]:
        """Inverse-scaled quantiles (N, H, Q) and attention (N, H, T) from each series' end."""
        series = np.arange(len(panel.ids))
        origins = np.full(len(series), panel.last_col)
        outputs, weights = [], []
        with _torch_threads(self.num_threads), torch.inference_mode():
            for start in range(0, len(series), 2048):
                part = slice(start, start + 2048)
                batch = assemble(
                    panel, self.roles_, series[part], origins[part], self.input_size_, self.horizon, self.scaler, False
                )
                scaled, attention = self.network_(**to_tensors(batch, self.device_))
                values = scaled.double().cpu().numpy() * batch.scale[:, None, None] + batch.loc[:, None, None]
                if self.log_target:
                    values = np.expm1(values)
                outputs.append(values)
                weights.append(attention.cpu().numpy())
        return np.concatenate(outputs), np.concatenate(weights)

    def _localise(self, times: np.ndarray, tz: str | None) -> pd.DatetimeIndex:
        return restore_zone(pd.DatetimeIndex(times.ravel()), tz)

    def predict(self, df: pd.DataFrame | None = None, future_df: pd.DataFrame | None = None) -> pd.DataFrame:
        """Forecast ``horizon`` periods after the end of each series.

        Args:
            df: history to forecast from; None uses the training series. Series unseen
                in training are allowed.
            future_df: future-known covariates for the horizon (required when the model has any).

        Returns:
            One row per series and step: ``unique_id``, ``ds``, ``y_hat`` (the median) and
            one ``y_hat_q..`` column per requested quantile.
        """
        panel, tz = self._panel_for(df, future_df)
        values, _ = self._forward(panel)
        if not np.isfinite(values).all():
            raise FloatingPointError("The network produced non-finite forecasts; please report this with the data.")
        values = self._blend_partners(panel, values)
        n, h = values.shape[:2]
        out = pd.DataFrame(
            {
                self.id_col: np.repeat(panel.ids, h),
                self.time_col: self._localise(future_timestamps(panel), tz),
                "y_hat": values[:, :, self.quantiles_.index(0.5)].ravel(),
            }
        )
        for q in self.quantiles or ():
            out[quantile_column(float(q))] = values[:, :, self.quantiles_.index(float(q))].ravel()
        return out

    def explain(
        self, df: pd.DataFrame | None = None, future_df: pd.DataFrame | None = None, include_padding: bool = False
    ) -> pd.DataFrame:
        """Attention weights of each horizon step over the history, in long format.

        Returns columns ``unique_id``, ``ds`` (target time), ``step`` (1..horizon),
        ``ds_history`` (attended time), ``lag`` (periods from the attended time to the
        origin; 0 is the origin) and ``weight``. Padded positions (before a series
        starts) get exactly zero weight and are omitted, or kept and flagged in a
        ``padded`` column with ``include_padding=True`` (their ``ds_history`` is the
        calendar period they would have had). The weights of each (series, step) sum
        to one. They show where the model looked (routing), not what caused the forecast.
        """
        panel, tz = self._panel_for(df, future_df)
        _, weights = self._forward(panel)
        n, h, t = weights.shape
        series = np.arange(n)
        hist_cols = panel.last_col + np.arange(1 - t, 1)
        hist_times = panel.timestamps(series[:, None], hist_cols[None, :])  # (N, T)
        target_times = future_timestamps(panel)  # (N, H)
        inside = hist_cols[None, :] >= panel.first_col[:, None]  # (N, T)
        s_idx, h_idx, t_idx = np.meshgrid(series, np.arange(h), np.arange(t), indexing="ij")
        real = np.broadcast_to(inside[:, None, :], weights.shape)
        keep = np.ones(weights.shape, dtype=bool) if include_padding else real
        out = pd.DataFrame(
            {
                self.id_col: panel.ids[s_idx[keep]],
                self.time_col: self._localise(target_times[s_idx[keep], h_idx[keep]], tz),
                "step": h_idx[keep] + 1,
                f"{self.time_col}_history": self._localise(hist_times[s_idx[keep], t_idx[keep]], tz),
                "lag": (t - 1 - t_idx[keep]),
                "weight": weights[keep].astype(np.float64),
            }
        )
        if include_padding:
            out["padded"] = ~real.ravel()
        return out

    # ------------------------------------------------------------------ persistence
    def save(self, path) -> None:
        """Write the fitted model to directory ``path`` (JSON config, weights, history tail)."""
        from .model.persistence import save_model

        check_is_fitted(self, "network_")
        save_model(self, path)

    @classmethod
    def load(cls, path) -> Seq2SeqForecaster:
        """Load a model written by :meth:`save`; never unpickles arbitrary objects."""
        from .model.persistence import load_model

        return load_model(cls, path)
