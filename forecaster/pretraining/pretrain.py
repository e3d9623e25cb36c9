"""Training one prior on its corpus, and writing it where the package ships its weights.

A prior is the estimator's own network trained at the family's longest horizon on windows from every
series of the corpus. Unlike a fit, a window may end past its series' last period (those targets are masked),
so short series still teach the first steps and long synthetic ones the last. There is no held-out part:
the corpus is not a panel anyone forecasts, and the validation suite judges the result.
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from ..data.features import fit_features
from ..data.frequency import normalise_freq
from ..data.roles import CovariateRoles
from ..data.scaling import naive_error_table
from ..data.validation import Columns, clean_history
from ..data.windows import admissible_origins
from ..estimator import NINE_LEVELS, Seq2SeqForecaster
from ..model.fitting import network_config
from ..model.inference import model_panel
from ..model.members import TrainingJob, fit_members
from ..model.network import Ensemble
from ..model.params import resolve_units, training_quantiles
from ..model.state import FittedState
from ..model.training import TrainConfig
from .corpus import FAMILIES, corpus

# Share of training windows drawn from the real (M3) series: synthetic windows outnumber them 5 to 20 times,
# and a prior that saw mostly synthetic data would learn their habits over real ones.
REAL_SHARE = 0.4
# Periods of history a pretraining window needs at least: short M3 yearly series (2 to 29 periods once cut)
# still teach the first steps.
MIN_HISTORY = 3


def prior_estimator(family: str, steps: int) -> Seq2SeqForecaster:
    """The estimator whose parameters the ``family`` prior is trained (and shipped) with."""
    spec = FAMILIES[family]
    return Seq2SeqForecaster(
        horizon=spec.horizon,
        input_size=spec.input_size,
        freq=spec.freq,
        season_length=spec.season_length,
        quantiles=NINE_LEVELS,
        max_steps=steps,
        early_stopping=False,
        progress=True,
    )


def pretrain(family: str, steps: int, seed: int = 0, batch_size: int = 128, progress: bool = True) -> Seq2SeqForecaster:
    """Train the ``family`` prior for ``steps`` steps from ``seed`` (corpus and weights); returns it as a fitted model.

    The model has no history (``predict`` needs ``df``) and no calibration (its quantiles are the network's).
    """
    model = prior_estimator(family, steps)
    model.set_params(batch_size=batch_size, progress=progress, random_state=seed)
    params = model.get_params()
    columns, roles = Columns("unique_id", "ds", "y"), CovariateRoles()
    frame, tz = clean_history(corpus(family, seed), columns, roles)
    offset = normalise_freq(model.freq)
    units = resolve_units(params, offset)
    features = fit_features(frame, columns.id, roles)
    quantiles = training_quantiles(model.quantiles)
    with warnings.catch_warnings():  # short M3 series are padded on purpose
        warnings.filterwarnings("ignore", message=".*less history than input_size.*")
        panel = model_panel(frame, columns, roles, features, offset, model.horizon, units)
    config = network_config(panel, roles, features, quantiles, units["input_size"], params)
    # Windows whose targets may run past the series' end (masked there): origins up to the last period but one.
    series, origins = admissible_origins(
        panel, config.input_size, config.horizon, np.full(len(panel.ids), panel.last_col + config.horizon - 1), MIN_HISTORY
    )
    series, origins = weigh_real(panel.ids, series, origins)
    train_config = TrainConfig(
        max_steps=steps,
        batch_size=batch_size,
        learning_rate=float(model.learning_rate),
        quantiles=quantiles,
        early_stopping=False,
        eval_every=max(steps // 20, 1),
        progress=progress,
        device="cpu",
    )
    naive = naive_error_table(panel.y, units["season_length"], panel.first_col)
    job = TrainingJob(panel, roles, series, origins, None, config, train_config, model.scaler, 1, naive_table=naive)
    started = time.perf_counter()
    result = fit_members(job, [seed], 1)[0]
    network = Ensemble(config, 1)
    network.members[0].load_state_dict(result.state_dict)
    network.eval()
    empty = pd.DataFrame({"unique_id": pd.Series([], dtype=object), "ds": pd.Series([], dtype="datetime64[ns]"), "y": []})
    state = FittedState(
        freq=offset.freqstr,
        roles=roles,
        features=features,
        quantiles=quantiles,
        network=config,
        n_members=1,
        tz=tz,
        history=empty,
        training_end=pd.Series([], dtype="datetime64[ns]", name="ds", index=pd.Index([], dtype=object, name="unique_id")),
        scaler=model.scaler,
        **units,
    )
    model.set_fitted(state, network, "cpu", [result])
    model.pretraining_ = {
        "family": family,
        "steps": steps,
        "seed": seed,
        "batch_size": batch_size,
        "series": int(len(panel.ids)),
        "synthetic_series": int(sum(str(i).startswith("synthetic/") for i in panel.ids)),
        "windows": int(len(np.unique(series * (panel.y.shape[1] + 1) + origins))),
        "real_share": float(np.mean(~np.char.startswith(panel.ids.astype(str), "synthetic/")[series])),
        "seconds": round(time.perf_counter() - started, 1),
        "final_loss": float(np.mean(result.train_loss[-200:])),
    }
    return model


def weigh_real(ids: np.ndarray, series: np.ndarray, origins: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The windows with those of real series repeated, so that they make up about ``REAL_SHARE`` of the draws."""
    real = ~np.char.startswith(ids.astype(str), "synthetic/")[series]
    n_real, n_synthetic = int(real.sum()), int((~real).sum())
    if n_real == 0 or n_synthetic == 0:
        return series, origins
    repeat = max(1, round(REAL_SHARE / (1 - REAL_SHARE) * n_synthetic / n_real))
    times = np.where(real, repeat, 1)
    return np.repeat(series, times), np.repeat(origins, times)


def write_prior(model: Seq2SeqForecaster, folder: Path) -> None:
    """Save a prior where the package loads it from (the safe model-file format)."""
    model.save(folder)
