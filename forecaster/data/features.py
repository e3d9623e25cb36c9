"""Covariate encodings learned at fit time from the training frame only.

Past and future-known covariates are standardised column-wise; static covariates
are standardised (numeric) or one-hot encoded (categorical). The statistics come
from the frame passed to `fit`, which in a backtest holds only data up to the cutoff.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd

from .roles import CovariateRoles


@dataclass(frozen=True)
class ColumnScaling:
    """Mean and standard deviation of one numeric column."""

    mean: float
    std: float


@dataclass(frozen=True)
class FeatureSpec:
    """Everything needed to turn covariate columns into network inputs, JSON-friendly."""

    numeric: dict[str, ColumnScaling] = field(default_factory=dict)
    categories: dict[str, list] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"numeric": {k: asdict(v) for k, v in self.numeric.items()}, "categories": self.categories}

    @classmethod
    def from_dict(cls, data: dict) -> FeatureSpec:
        numeric = {k: ColumnScaling(**v) for k, v in data["numeric"].items()}
        return cls(numeric=numeric, categories={k: list(v) for k, v in data["categories"].items()})


def _scaling(values: np.ndarray) -> ColumnScaling:
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return ColumnScaling(0.0, 1.0)
    std = float(finite.std())
    return ColumnScaling(float(finite.mean()), std if std > 0 else 1.0)


def fit_features(frame: pd.DataFrame, id_col: str, roles: CovariateRoles) -> FeatureSpec:
    """Learn covariate encodings from a cleaned training frame."""
    numeric = {name: _scaling(frame[name].to_numpy(dtype=np.float64)) for name in roles.past + roles.future}
    categories: dict[str, list] = {}
    statics = frame.groupby(id_col, sort=False)[list(roles.static)].first() if roles.static else None
    for name in roles.static:
        column = statics[name]
        if pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
            numeric[name] = _scaling(column.to_numpy(dtype=np.float64))
        else:
            categories[name] = sorted({_json_value(v) for v in column.tolist()}, key=str)
    return FeatureSpec(numeric, categories)


def _json_value(value: object) -> object:
    if isinstance(value, (np.generic,)):
        return value.item()
    return value


def scale_columns(frame: pd.DataFrame, names: tuple[str, ...], spec: FeatureSpec) -> np.ndarray:
    """Standardise numeric covariates; (rows, len(names)) float64, NaN kept."""
    if not names:
        return np.zeros((len(frame), 0))
    out = np.empty((len(frame), len(names)))
    for j, name in enumerate(names):
        scaling = spec.numeric[name]
        out[:, j] = (frame[name].to_numpy(dtype=np.float64) - scaling.mean) / scaling.std
    return out


def encode_statics(per_series: pd.DataFrame, names: tuple[str, ...], spec: FeatureSpec) -> np.ndarray:
    """Encode one row of statics per series into (N, S) float32; unseen categories map to all zeros."""
    blocks = []
    for name in names:
        if name in spec.categories:
            cats = spec.categories[name]
            codes = pd.Categorical(per_series[name].tolist(), categories=cats).codes
            onehot = np.zeros((len(codes), len(cats)), dtype=np.float32)
            seen = codes >= 0
            onehot[np.flatnonzero(seen), codes[seen]] = 1.0
            blocks.append(onehot)
        else:
            scaling = spec.numeric[name]
            blocks.append(((per_series[name].to_numpy(dtype=np.float64) - scaling.mean) / scaling.std)[:, None])
    if not blocks:
        return np.zeros((len(per_series), 0), dtype=np.float32)
    return np.concatenate(blocks, axis=1).astype(np.float32)


def static_width(names: tuple[str, ...], spec: FeatureSpec) -> int:
    """Number of network inputs the static covariates expand into."""
    return sum(len(spec.categories[n]) if n in spec.categories else 1 for n in names)
