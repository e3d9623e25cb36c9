"""Save and load fitted models without pickle.

A model directory holds ``config.json`` (parameters and the fitted state, ``FittedState.to_dict``), ``weights.pt``
(a plain tensor state dict read with ``torch.load(weights_only=True)``) and
``history.npz`` (the history tail used by ``predict()``, read with
``allow_pickle=False``). The config records a SHA-256 of both binary files, so a
tampered or truncated file is refused before it is parsed.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from .._version import __version__
from ..data.frequency import normalise_freq, season_spans_a_year
from .network import Ensemble, NetworkConfig
from .state import FittedState

FORMAT_VERSION = 1
CONFIG, WEIGHTS, HISTORY = "config.json", "weights.pt", "history.npz"


class ModelFileError(ValueError):
    """A model directory is missing, incomplete, tampered with or from an incompatible version."""


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _column_array(values: pd.Series) -> tuple[np.ndarray, str]:
    if pd.api.types.is_datetime64_any_dtype(values):
        return values.to_numpy(dtype="datetime64[ns]").astype(np.int64), "datetime"
    if pd.api.types.is_bool_dtype(values):
        return values.to_numpy(dtype=bool), "bool"
    if pd.api.types.is_integer_dtype(values):
        return values.to_numpy(dtype=np.int64), "int"
    if pd.api.types.is_numeric_dtype(values):
        return values.to_numpy(dtype=np.float64), "float"
    return values.astype(str).to_numpy(dtype=str), "str"


def _restore_column(values: np.ndarray, kind: str) -> np.ndarray:
    if kind == "datetime":
        return values.astype("datetime64[ns]")
    return values.astype(object) if kind == "str" else values


def save_model(model, path) -> None:
    """Write a fitted :class:`Seq2SeqForecaster` to directory ``path``."""
    folder = Path(path)
    folder.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu() for k, v in model.network_.state_dict().items()}
    torch.save(state, folder / WEIGHTS)
    arrays, kinds = {}, {}
    for i, name in enumerate(model.history_.columns):
        arrays[f"c{i}"], kinds[name] = _column_array(model.history_[name])
    np.savez(folder / HISTORY, **arrays)
    params = {k: (list(v) if isinstance(v, tuple) else v) for k, v in model.get_params().items()}
    config = {
        "format_version": FORMAT_VERSION,
        "forecaster_version": __version__,
        "params": params,
        "fitted": {**model.state_.to_dict(), "history_columns": kinds},
        "sha256": {WEIGHTS: _digest(folder / WEIGHTS), HISTORY: _digest(folder / HISTORY)},
    }
    (folder / CONFIG).write_text(json.dumps(config, indent=2))


def _read_config(folder: Path) -> dict:
    for name in (CONFIG, WEIGHTS, HISTORY):
        if not (folder / name).is_file():
            raise ModelFileError(f"Model directory {str(folder)!r} has no `{name}`; was it written by `save`?")
    try:
        config = json.loads((folder / CONFIG).read_text())
    except json.JSONDecodeError as error:
        raise ModelFileError(f"`{CONFIG}` in {str(folder)!r} is not valid JSON ({error}).") from error
    if config.get("format_version") != FORMAT_VERSION:
        raise ModelFileError(
            f"Model in {str(folder)!r} has format version {config.get('format_version')!r}; this forecaster "
            f"({__version__}) reads version {FORMAT_VERSION}. Refit the model with this version."
        )
    for name in (WEIGHTS, HISTORY):
        if _digest(folder / name) != config.get("sha256", {}).get(name):
            raise ModelFileError(
                f"`{name}` in {str(folder)!r} does not match its recorded checksum: it was modified or truncated."
            )
    return config


def load_model(cls, path):
    """Rebuild a fitted estimator from ``path`` (see :func:`save_model`)."""
    folder = Path(path)
    config = _read_config(folder)
    fitted = config["fitted"]
    # Files written before one of these options existed were fitted without it.
    defaults = {"seasonal_profile": False, "trend_line": False, "theta_weight": 0.0, "holt_winters_weight": 0.0}
    model = cls(**{**defaults, **config["params"]})
    try:
        state = torch.load(folder / WEIGHTS, map_location="cpu", weights_only=True)
        network = Ensemble(NetworkConfig(**fitted["network"]), int(fitted.get("n_members", 1)))
        network.load_state_dict(state)
    except Exception as error:  # noqa: BLE001 - any failure here means an unusable file
        raise ModelFileError(f"Could not load `{WEIGHTS}` from {str(folder)!r}: {error}") from error
    network.eval()
    with np.load(folder / HISTORY, allow_pickle=False) as arrays:
        history = pd.DataFrame(
            {name: _restore_column(arrays[f"c{i}"], kind) for i, (name, kind) in enumerate(fitted["history_columns"].items())}
        )
    params = model.get_params()
    trend = params["trend_line"]
    legacy = {  # what files written before the state recorded these fields were fitted with
        "scaler": params["scaler"],
        "log_target": bool(params["log_target"]),
        "seasonal_profile": bool(params["seasonal_profile"]),
        "trend_line": season_spans_a_year(normalise_freq(fitted["freq"]), int(fitted["season_length"]))
        if trend is None
        else bool(trend),
    }
    model.state_ = FittedState.from_dict(fitted, history, model.id_col, legacy)
    model.device_ = "cpu"
    model.train_results_ = []
    model._cache = None
    model.network_ = network
    return model
