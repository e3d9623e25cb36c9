"""Covariate encodings learned at fit time from the training frame only.

Past and future-known covariates are standardised column-wise; static covariates
are standardised (numeric) or one-hot encoded (categorical). The statistics come
from the frame passed to `fit`, which in a backtest holds only data up to the cutoff.
"""

from __future__ import annotations

import datetime
import math
import reprlib
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from .roles import CovariateRoles
from .seen_values import joined_codes, seen_values
from .static_labels import check_static_types, json_value, warn_near_labels


@dataclass(frozen=True)
class ColumnScaling:
    """Mean and standard deviation of one numeric column, and what values the fit saw: their range (``low``,
    ``high``) and, for a flag or code (at most ``seen_values.MAX_CODES`` distinct values), the values themselves (``codes``).
    None where the column had no value, and in files written before fits recorded them (nothing to check against)."""

    mean: float
    std: float
    low: float | None = None
    high: float | None = None
    codes: tuple[float, ...] | None = None

    @classmethod
    def from_dict(cls, data: dict) -> ColumnScaling:
        codes = data.get("codes")
        return cls(**{**data, "codes": None if codes is None else tuple(float(c) for c in codes)})

    def widened(self, other: ColumnScaling) -> ColumnScaling:
        """This scaling, with the values ``other`` saw added to those seen (a warm start keeps the trained scaling); as
        it is where it holds no record of them (a file written before fits kept one: what it saw is not known)."""
        if other.low is None or self.low is None:
            return self
        codes = joined_codes(self.codes, other.codes)
        return replace(self, low=min(self.low, other.low), high=max(self.high, other.high), codes=codes)


@dataclass(frozen=True)
class FeatureSpec:
    """Everything needed to turn covariate columns into network inputs, JSON-friendly."""

    numeric: dict[str, ColumnScaling] = field(default_factory=dict)
    categories: dict[str, list] = field(default_factory=dict)
    # The whole panel's tallies of zero targets per flag value (``zero_tallies``), where the spec was merged from a
    # Dask panel's partitions and the fit reads a sample of its series: closures are learnt from them. Not saved.
    zero_tallies: dict | None = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict:
        """JSON form; each category is typed (:func:`to_typed`) so that ``1``, ``"1"`` and a timestamp come back as themselves."""
        categories = {name: [to_typed(v) for v in values] for name, values in self.categories.items()}
        numeric = {k: {**asdict(v), "codes": None if v.codes is None else list(v.codes)} for k, v in self.numeric.items()}
        return {"numeric": numeric, "categories": categories}

    @classmethod
    def from_dict(cls, data: dict) -> FeatureSpec:
        """Inverse of :meth:`to_dict`; also reads the untyped categories (plain JSON scalars) of format-1 model files."""
        numeric = {k: ColumnScaling.from_dict(v) for k, v in data["numeric"].items()}
        categories = {k: [from_typed(c) if isinstance(c, dict) else c for c in v] for k, v in data["categories"].items()}
        return cls(numeric=numeric, categories=categories)


def _scaling(values: np.ndarray) -> ColumnScaling:
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return ColumnScaling(0.0, 1.0)
    std = float(finite.std())
    return ColumnScaling(float(finite.mean()), std if std > 0 else 1.0, **seen_values(finite))


def fit_features(frame: pd.DataFrame, id_col: str, roles: CovariateRoles) -> FeatureSpec:
    """Learn covariate encodings from a cleaned training frame."""
    numeric = {name: _scaling(frame[name].to_numpy(dtype=np.float64)) for name in roles.past + roles.future}
    categories: dict[str, list] = {}
    statics = frame.groupby(id_col, sort=False, observed=True)[list(roles.static)].first() if roles.static else None
    for name in roles.static:
        column = statics[name]
        if pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
            numeric[name] = _scaling(column.to_numpy(dtype=np.float64))
        else:
            # The type breaks ties between values that print alike (1 and "1"), so the order never depends on hashing.
            categories[name] = sorted({json_value(v) for v in column.tolist()}, key=lambda v: (str(v), type(v).__name__))
    return FeatureSpec(numeric, categories)


@dataclass(frozen=True)
class Moments:
    """Count, mean and sum of squared deviations of a column's finite values, and the values seen (``ColumnScaling``):
    what ``_scaling`` needs, mergeable."""

    count: int
    mean: float
    m2: float
    low: float | None = None
    high: float | None = None
    codes: tuple[float, ...] | None = None

    @classmethod
    def of(cls, values: np.ndarray) -> Moments:
        finite = values[np.isfinite(values)]
        if finite.size == 0:
            return cls(0, 0.0, 0.0)
        mean = finite.mean()
        return cls(int(finite.size), float(mean), float(np.sum(np.abs(finite - mean) ** 2)), **seen_values(finite))

    def merge(self, other: Moments) -> Moments:
        """The moments of both parts together (Chan, Golub and LeVeque's pairwise update)."""
        if other.count == 0:
            return self
        if self.count == 0:
            return other
        count = self.count + other.count
        delta = other.mean - self.mean
        mean = self.mean + delta * other.count / count
        m2 = self.m2 + other.m2 + delta * delta * self.count * other.count / count
        seen = {"low": min(self.low, other.low), "high": max(self.high, other.high)}
        return Moments(count, mean, m2, **seen, codes=joined_codes(self.codes, other.codes))

    def scaling(self) -> ColumnScaling:
        if self.count == 0:
            return ColumnScaling(0.0, 1.0)
        std = math.sqrt(self.m2 / self.count)
        return ColumnScaling(self.mean, std if std > 0 else 1.0, self.low, self.high, self.codes)


@dataclass(frozen=True)
class FeatureParts:
    """What one part of a frame (whole series) tells about the covariate encodings; :func:`merge_features` joins parts."""

    numeric: dict[str, Moments]
    categories: dict[str, frozenset]


def feature_parts(frame: pd.DataFrame, id_col: str, roles: CovariateRoles) -> FeatureParts:
    """The covariate statistics of a cleaned frame whose series are whole (a Dask partition of whole series)."""
    numeric = {name: Moments.of(frame[name].to_numpy(dtype=np.float64)) for name in roles.past + roles.future}
    categories: dict[str, frozenset] = {}
    statics = frame.groupby(id_col, sort=False, observed=True)[list(roles.static)].first() if roles.static else None
    for name in roles.static:
        column = statics[name]
        if pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
            numeric[name] = Moments.of(column.to_numpy(dtype=np.float64))
        else:
            categories[name] = frozenset(json_value(v) for v in column.tolist())
    return FeatureParts(numeric, categories)


def merge_features(parts: list[FeatureParts]) -> FeatureSpec:
    """The encodings :func:`fit_features` learns from the whole frame, from its parts' statistics.

    Means and deviations agree with ``fit_features`` to rounding (they are summed part by part); the
    categories are the same, in the same order.
    """
    if not parts:
        raise ValueError("No part of the frame to learn the covariate encodings from.")
    numeric: dict[str, Moments] = {}
    categories: dict[str, set] = {}
    for part in parts:
        for name, moments in part.numeric.items():
            numeric[name] = numeric[name].merge(moments) if name in numeric else moments
        for name, values in part.categories.items():
            categories.setdefault(name, set()).update(values)
    return FeatureSpec(
        {name: moments.scaling() for name, moments in numeric.items()},
        {name: sorted(values, key=lambda v: (str(v), type(v).__name__)) for name, values in categories.items()},
    )


def scale_columns(frame: pd.DataFrame, names: tuple[str, ...], spec: FeatureSpec) -> np.ndarray:
    """Standardise numeric covariates; (rows, len(names)) float64, NaN kept."""
    if not names:
        return np.zeros((len(frame), 0))
    out = np.empty((len(frame), len(names)))
    for j, name in enumerate(names):
        scaling = spec.numeric[name]
        out[:, j] = (frame[name].to_numpy(dtype=np.float64) - scaling.mean) / scaling.std
    return out


def encode_statics(
    per_series: pd.DataFrame, names: tuple[str, ...], spec: FeatureSpec, ids: np.ndarray | None = None
) -> np.ndarray:
    """One row of statics per series as (N, S) float32; unseen categories map to all zeros, with a warning (``ids``).

    Raises:
        ValueError: a categorical static retyped as a whole (``check_static_types``), or text in a numeric one.
    """
    blocks = []
    for name in names:
        if name in spec.categories:
            cats = spec.categories[name]
            check_static_types(name, cats, per_series[name].tolist())
            codes = pd.Categorical(per_series[name].tolist(), categories=cats).codes
            onehot = np.zeros((len(codes), len(cats)), dtype=np.float32)
            seen = codes >= 0
            onehot[np.flatnonzero(seen), codes[seen]] = 1.0
            if not seen.all():
                rows = per_series.index.to_numpy() if ids is None else np.asarray(ids)
                warn_near_labels(name, per_series, ~seen, rows, cats)
            blocks.append(onehot)
        else:
            scaling = spec.numeric[name]
            column = per_series[name]
            if not pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
                raise ValueError(
                    f"Static covariate `{name}` was fitted as a number but holds {column.dtype} values "
                    f"({reprlib.repr(list(pd.unique(column)))}): convert it back to numbers, or refit."
                )
            blocks.append(((column.to_numpy(dtype=np.float64) - scaling.mean) / scaling.std)[:, None])
    if not blocks:
        return np.zeros((len(per_series), 0), dtype=np.float32)
    return np.concatenate(blocks, axis=1).astype(np.float32)


def static_width(names: tuple[str, ...], spec: FeatureSpec) -> int:
    """Number of network inputs the static covariates expand into."""
    return sum(len(spec.categories[n]) if n in spec.categories else 1 for n in names)


# ---------------------------------------------------------------------------- typed values
# Model files store category values and series ids as {"type": ..., "value": ...}, so that each
# comes back with its own type: JSON alone would turn a timestamp into text (or refuse it) and
# cannot tell the category 1 from "1" once they pass through a string column.

TYPED_VALUE_TYPES = ("none", "na", "nat", "bool", "int", "float", "str", "datetime", "date", "timedelta")


def to_typed(value: Any) -> dict[str, Any]:
    """A JSON-able ``{"type", "value"}`` form of one scalar that :func:`from_typed` turns back into an equal value.

    NumPy scalars come back as the matching Python scalar, ``datetime``/``np.datetime64`` as ``pd.Timestamp``.

    Raises:
        TypeError: a value of another type (the caller names the column).
    """
    if value is None:
        return {"type": "none"}
    if value is pd.NA:
        return {"type": "na"}
    if value is pd.NaT or (isinstance(value, (np.datetime64, np.timedelta64)) and np.isnat(value)):
        return {"type": "nat"}
    if isinstance(value, (bool, np.bool_)):
        return {"type": "bool", "value": bool(value)}
    if isinstance(value, (datetime.timedelta, np.timedelta64)):  # before int: np.timedelta64 is a NumPy integer
        return {"type": "timedelta", "value": int(pd.Timedelta(value).value)}
    if isinstance(value, (int, np.integer)):
        return {"type": "int", "value": int(value)}
    if isinstance(value, (float, np.floating)):
        number = float(value)
        return {"type": "float", "value": number if math.isfinite(number) else repr(number)}
    if isinstance(value, str):
        return {"type": "str", "value": str(value)}
    if isinstance(value, (datetime.datetime, np.datetime64)):
        stamp = pd.Timestamp(value)
        zone = None if stamp.tz is None else str(stamp.tz)
        if zone is not None:  # keep the zone's name where pandas can read it back; the ISO offset keeps the instant anyway
            try:
                zone = zone if pd.Timestamp(stamp.isoformat()).tz_convert(zone) == stamp else None
            except Exception:  # noqa: BLE001 - an unreadable zone name (a fixed offset) is stored as the offset alone
                zone = None
        return {"type": "datetime", "value": stamp.isoformat(), "tz": zone}
    if isinstance(value, datetime.date):
        return {"type": "date", "value": value.isoformat()}
    raise TypeError(f"values of type {type(value).__name__} ({value!r}) cannot be stored in a model file")


def from_typed(data: Any) -> Any:
    """The value :func:`to_typed` encoded.

    Raises:
        ValueError: ``data`` is not such an encoding (wrong keys, unknown type, a value of the wrong JSON type).
    """
    if not isinstance(data, dict) or not set(data) <= {"type", "value", "tz"} or data.get("type") not in TYPED_VALUE_TYPES:
        raise ValueError(f"not a typed value ({{'type': one of {TYPED_VALUE_TYPES}, 'value': ...}})")
    kind, value = data["type"], data.get("value")
    if kind in ("none", "na", "nat"):
        if "value" in data:
            raise ValueError(f"a typed {kind!r} has no value")
        return {"none": None, "na": pd.NA, "nat": pd.NaT}[kind]
    if kind != "datetime" and "tz" in data:
        raise ValueError(f"a typed {kind!r} has no time zone")
    expected = {"bool": bool, "int": int, "float": (int, float, str), "str": str, "datetime": str, "date": str, "timedelta": int}
    if isinstance(value, bool) != (kind == "bool") or not isinstance(value, expected[kind]):
        raise ValueError(f"a typed {kind!r} cannot hold {value!r}")
    try:
        if kind in ("bool", "int", "str"):
            return value
        if kind == "float":
            if isinstance(value, str) and value not in ("nan", "inf", "-inf"):
                raise ValueError(f"{value!r} is not a number")
            return float(value)
        if kind == "date":
            return datetime.date.fromisoformat(value)
        if kind == "timedelta":
            return pd.Timedelta(value)
        stamp = pd.Timestamp(value)
        zone = data.get("tz")
        if zone is not None and (not isinstance(zone, str) or stamp.tz is None):
            raise ValueError(f"time zone {zone!r} of a timestamp without an offset")
        return stamp if zone is None else stamp.tz_convert(zone)
    except ValueError:
        raise
    except Exception as error:  # noqa: BLE001 - pandas raises several types for unreadable dates and zones
        raise ValueError(f"unreadable {kind}: {value!r} ({error})") from error


def allowed_dtype(name: Any) -> Any:
    """The pandas dtype named ``name`` if model files may hold columns of it (plain NumPy data, time zones, text,
    nullable numbers, categories), else ValueError."""
    if not isinstance(name, str):
        raise ValueError(f"dtype must be a string; got {name!r}")
    try:
        dtype = pd.api.types.pandas_dtype(name)
    except Exception as error:  # noqa: BLE001 - pandas raises TypeError or ValueError for unknown names
        raise ValueError(f"unknown dtype {name!r}") from error
    if isinstance(dtype, np.dtype):
        ok = dtype.kind in "biufMmO"
    else:
        masked = ("boolean", "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64", "Float32", "Float64")
        ok = isinstance(dtype, (pd.DatetimeTZDtype, pd.StringDtype, pd.CategoricalDtype)) or str(dtype) in masked
    if not ok:
        raise ValueError(f"dtype {name!r} is not one a model file holds")
    return dtype


def typed_index(index: pd.Index) -> dict[str, Any]:
    """JSON form of an index of labels (series ids) that keeps each label's type and the index's dtype."""
    dtype = index.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return {
            "dtype": "category",
            "values": [to_typed(v) for v in index.tolist()],
            "categories": typed_index(dtype.categories),
            "ordered": bool(dtype.ordered),
        }
    return {"dtype": str(dtype), "values": [to_typed(v) for v in index.tolist()]}


def index_from_typed(data: dict[str, Any], name: str | None = None) -> pd.Index:
    """Inverse of :func:`typed_index` (ValueError for a malformed one)."""
    if not isinstance(data, dict) or not isinstance(data.get("values"), list):
        raise ValueError("a typed index is {'dtype': ..., 'values': [...]}")
    values = [from_typed(v) for v in data["values"]]
    if data.get("dtype") == "category":
        if set(data) != {"dtype", "values", "categories", "ordered"} or not isinstance(data["ordered"], bool):
            raise ValueError("a categorical index needs 'categories' and 'ordered' (true or false)")
        categories = index_from_typed(data["categories"])
        if not categories.is_unique:
            raise ValueError("categories must be distinct")
        dtype = pd.CategoricalDtype(categories, ordered=data["ordered"])
        labels = np.empty(len(values), dtype=object)
        labels[:] = values
        codes = pd.Categorical(labels, dtype=dtype).codes
        if (codes < 0).any():
            raise ValueError("a value is not one of its categories")
        return pd.CategoricalIndex(pd.Categorical.from_codes(codes, dtype=dtype), name=name)
    if set(data) != {"dtype", "values"}:
        raise ValueError("a typed index has exactly the keys 'dtype' and 'values'")
    dtype = allowed_dtype(data["dtype"])
    if isinstance(dtype, pd.CategoricalDtype):
        raise ValueError("a categorical index is written with dtype 'category'")
    if isinstance(dtype, np.dtype) and dtype.kind == "O":
        array = np.empty(len(values), dtype=object)
        array[:] = values
        return pd.Index(array, dtype=object, name=name)
    try:
        return pd.Index(pd.array(values, dtype=dtype), name=name)
    except Exception as error:  # noqa: BLE001 - values that do not fit the dtype
        raise ValueError(f"values do not fit dtype {data['dtype']!r} ({error})") from error
