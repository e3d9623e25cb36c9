"""Encode a fitted model into the bytes of every file of its model directory, in memory.

Nothing touches the disk unless every file encodes; ``persistence.save_model`` then writes the bytes.
"""

from __future__ import annotations

import io
import json
from typing import Any

import numpy as np
import pandas as pd
import torch

from .._version import __version__
from .file_layout import CONFIG, FORMAT_VERSION, HISTORY, MANIFEST, WEIGHTS, digest
from .history_file import history_bytes


def json_param(name: str, value: Any) -> Any:
    if isinstance(value, pd.DateOffset):
        return value.freqstr
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (tuple, list, pd.Index, np.ndarray)):
        return [json_param(name, v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"Parameter `{name}`={value!r} cannot be stored in a model file.")


def encode_model(model) -> dict[str, bytes]:
    """Every file of the model directory, in memory: nothing touches the disk unless all of them encode."""
    buffer = io.BytesIO()
    torch.save({k: v.detach().cpu() for k, v in model.network_.state_dict().items()}, buffer)
    weights = buffer.getvalue()
    history, columns = history_bytes(model.history_)
    config = {
        "format_version": FORMAT_VERSION,
        "forecaster_version": __version__,
        "params": {name: json_param(name, value) for name, value in model.get_params().items()},
        "fitted": {**model.state_.to_dict(), "history_columns": columns},
    }
    try:
        config_bytes = json.dumps(config, indent=2, allow_nan=False).encode()
    except (TypeError, ValueError) as error:
        raise TypeError(f"The fitted state cannot be stored as JSON: {error}.") from error
    files = {WEIGHTS: weights, HISTORY: history, CONFIG: config_bytes}
    manifest = {"format_version": FORMAT_VERSION, "sha256": {name: digest(data) for name, data in files.items()}}
    return {**files, MANIFEST: json.dumps(manifest, indent=2).encode()}
