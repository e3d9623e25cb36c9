"""``predict`` and ``explain`` on Dask DataFrames: lazily, one partition of whole series at a time.

A fitted model forecasts each series from that series' own history and future-known covariates, so a
panel split by series can be forecast partition by partition with the pandas path, and the pieces are
the pandas result's rows. Every row of ``df`` and ``future_df`` gets a key, a hash of its series id (as
text) modulo the number of partitions, and both frames are shuffled so that partition ``k`` holds the
rows of key ``k``: each series lies whole in one partition, and its future rows in the partition of the
same index. ``map_partitions`` then calls the estimator's own pandas method
on each pair, with the fitted model shipped to the workers once, as one task.

The result's type follows ``df``: a Dask ``df`` gives a lazy Dask DataFrame, with ``future_df`` as a
Dask or a pandas frame. A pandas ``df``, or None (the training history, held in memory), with a Dask
``future_df`` is refused: the caller either computes ``future_df`` or passes the history as Dask.

A ``df`` indexed by the id with known divisions (``dd.read_parquet(folder, index=id_col,
calculate_divisions=True)`` on files sorted by id) already holds each series in one partition: it is
forecast where it lies, without the shuffle, and ``future_df`` is split at its divisions.

Rows are validated partition by partition when the result is computed, with the pandas path's messages.
What needs no data is checked at once: the model is fitted and unchanged (or an unfitted model from
``from_pretrained``, whose frequency is then read once from the first non-empty partition), the id and time columns
exist, and a future frame is there when the model needs one.
"""

from __future__ import annotations

import copy
import uuid
from dataclasses import replace

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd

from ..data.dates import UTC_OFFSET
from ..data.frequency import infer_offset
from ..data.validation import clean_history, columns_and_roles
from ..engines import is_dask_frame
from ..model.inference import accountable
from ..model.outputs import quantile_column
from .window_stream import flat_partition

__all__ = ["forecast_frames", "head_rows", "series_partition"]

# The partition key: the index of the shuffled copies only (never of the caller's frames), dropped before the pandas path.
KEY = "__forecaster_partition__"

ACCOUNT_COLUMNS = (
    "contribution",
    "step_baseline",
    "step_covariates",
    "step_partners",
    "step_floor",
    "step_head",
    "y_hat",
)


def series_partition(ids: pd.Series, npartitions: int) -> np.ndarray:
    """Partition of each row's series: a hash of the id as text (fixed key), the same in every process and frame."""
    text = ids.astype(str).to_numpy(dtype=object)
    return (pd.util.hash_array(text) % np.uint64(npartitions)).astype(np.int64)


def _keyed(part: pd.DataFrame, id_col: str, npartitions: int) -> pd.DataFrame:
    return part.assign(**{KEY: series_partition(part[id_col], npartitions)})


def by_series(frame: dd.DataFrame, id_col: str, npartitions: int) -> dd.DataFrame:
    """``frame`` with every series in one partition: partition ``k`` holds the series whose key is ``k``, in any frame.

    The key becomes the index, with divisions ``0, 1, ..., npartitions``: key ``k`` goes to partition ``k``
    (a hash shuffle on the key would hash it again, and leave some partitions empty and others double).
    """
    meta = frame._meta.assign(**{KEY: np.zeros(0, dtype=np.int64)})
    keyed = frame.map_partitions(_keyed, id_col, npartitions, meta=meta)
    return keyed.set_index(KEY, divisions=list(range(npartitions + 1)), sort=True)


def indexed_by_series(frame: dd.DataFrame, id_col: str) -> bool:
    """Whether ``frame`` is indexed by the id with known divisions (as ``dd.read_parquet(folder, index=id_col,
    calculate_divisions=True)`` reads files sorted by id). Its partitions may still split a series at a
    boundary (divisions only bound each partition from below): :func:`whole_series` checks."""
    return frame.index.name == id_col and id_col not in frame.columns and frame.known_divisions


def _summary(part: pd.DataFrame) -> pd.DataFrame:
    index = part.index
    if not len(index):
        return pd.DataFrame({"first": [], "last": [], "rows": [], "series": []})
    return pd.DataFrame({"first": [index.min()], "last": [index.max()], "rows": [len(index)], "series": [index.nunique()]})


def partition_summary(frame: dd.DataFrame) -> pd.DataFrame:
    """Per non-empty partition of an id-indexed frame: its smallest and largest id, rows and series (one read)."""
    ids = pd.Series(dtype=frame.index.dtype)
    meta = pd.DataFrame({"first": ids, "last": ids, "rows": pd.Series(dtype="int64"), "series": pd.Series(dtype="int64")})
    return frame.map_partitions(_summary, meta=meta).compute()


def whole_series(frame: dd.DataFrame, summary: pd.DataFrame | None = None) -> bool:
    """Whether every series of an id-indexed frame lies in one partition: each partition's largest id comes before
    the next partition's smallest. Reads the frame once (:func:`partition_summary`) unless given its summary."""
    ends = partition_summary(frame) if summary is None else summary
    return bool((ends["last"].to_numpy()[:-1] < ends["first"].to_numpy()[1:]).all())


def flat(frame: dd.DataFrame) -> dd.DataFrame:
    """An id-indexed frame with the id back as a column, partition by partition (a frame-wide ``reset_index``
    may gather partitions)."""
    return frame.map_partitions(pd.DataFrame.reset_index, meta=frame._meta.reset_index())


def _on_divisions(frame: dd.DataFrame, id_col: str, divisions: tuple) -> dd.DataFrame:
    """``frame`` indexed by the id and split at ``divisions`` (partition ``k`` of it pairs with ``k`` of the history)."""
    if frame.index.name == id_col and id_col not in frame.columns:
        frame = flat(frame)
    return frame.set_index(id_col, divisions=list(divisions))


def output_meta(model, method: str, df_meta: pd.DataFrame, include_padding: bool) -> pd.DataFrame:
    """The empty frame, with dtypes, that the pandas ``method`` returns for a ``df`` like ``df_meta``."""
    id_col, time_col = model.id_col, model.time_col
    given = df_meta[id_col].dtype
    # Integer ids come back as numpy integers of their width (as the pandas path gives them), whether given as numpy,
    # nullable or Arrow integers, or as categories of integers; any other id as objects.
    base = given.categories.dtype if isinstance(given, pd.CategoricalDtype) else given
    numpy = base if isinstance(base, np.dtype) else getattr(base, "numpy_dtype", None)
    ids = numpy if isinstance(numpy, np.dtype) and numpy.kind in "iu" else np.dtype(object)
    given_times = df_meta[time_col].dtype  # a zone is in a numpy-backed dtype's ``tz``, or an Arrow one's
    tz = getattr(given_times, "tz", None) or getattr(getattr(given_times, "pyarrow_dtype", None), "tz", None)
    times = pd.DatetimeTZDtype("ns", tz) if tz is not None else np.dtype("datetime64[ns]")
    if method == "predict":
        levels = () if model.quantiles is None else model.quantiles
        values = {"y_hat": "float64", **{quantile_column(float(q)): "float64" for q in levels}}
        dtypes = {id_col: ids, time_col: times, **values}
    else:
        dtypes = {id_col: ids, time_col: times, "step": "int64", f"{time_col}_history": times}
        dtypes.update(lag="int64", weight="float64")
        if accountable(model.state_):
            dtypes.update(dict.fromkeys(ACCOUNT_COLUMNS, "float64"))
        dtypes["closed_step"] = "bool"
        if include_padding:
            dtypes["padded"] = "bool"
    return pd.DataFrame({name: pd.Series(dtype=dtype) for name, dtype in dtypes.items()})


def _forecast_partition(
    history: pd.DataFrame, future: pd.DataFrame | None, model, method: str, meta: pd.DataFrame, options: dict
) -> pd.DataFrame:
    """The pandas ``method`` on one partition's series, in the result's dtypes."""
    history = _plain(history, model.id_col)
    future = None if future is None else _plain(future, model.id_col)
    if history.empty:  # rows of ``future_df`` whose series ``df`` lacks are not read, as on the pandas path
        return meta.copy()
    _refuse_offset_text(history[model.time_col], model.time_col)
    out = getattr(model, method)(df=history, future_df=future, **options)
    return out.astype(meta.dtypes.to_dict())


def _refuse_offset_text(times: pd.Series, time_col: str) -> None:
    """Text timestamps with UTC offsets are refused in every partition, whatever its rows: how the pandas path reads
    them (local dates, or instants in UTC) depends on all of them, and the result's zone must be known before any
    partition is read."""
    if not (pd.api.types.is_object_dtype(times) or pd.api.types.is_string_dtype(times)) or not len(times):
        return
    if times.astype(str).str.strip().str.contains(rf"(?:{UTC_OFFSET})$", regex=True).any():
        raise ValueError(
            f"Column `{time_col}` of the Dask `df` is text with UTC offsets: a Dask result's time zone must be known from "
            "the frame's dtype before any partition is read. Parse the column first, e.g. "
            f"df['{time_col}'] = dd.to_datetime(df['{time_col}'], utc=True), then .dt.tz_convert(<zone>) for local times."
        )


def _plain(part: pd.DataFrame, id_col: str) -> pd.DataFrame:
    """A partition with a plain index: the id back as a column when it was the index, the partition key dropped."""
    return part.reset_index(drop=part.index.name != id_col)


def _some_series(part: pd.DataFrame, id_col: str, count: int) -> pd.DataFrame:
    part = flat_partition(part, id_col)
    return part.loc[part[id_col].isin(part[id_col].unique()[:count])]


def head_rows(rows, columns, roles, count: int = 500) -> pd.DataFrame:
    """A few hundred whole series of the first non-empty partition, validated: the frequency is read from them."""
    for index in range(rows.npartitions):
        head = rows.partitions[index].map_partitions(_some_series, columns.id, count, meta=rows._meta).compute()
        if len(head):
            return clean_history(head, columns, roles)[0]
    raise ValueError("`df` has no rows.")


def _panel_offset(history: dd.DataFrame, model) -> pd.DateOffset:
    """The frequency of a panel of whole series, read from a few hundred of them (:func:`head_rows`)."""
    columns, roles = columns_and_roles(model.get_params())
    head = head_rows(history, columns, roles)
    return infer_offset(head[columns.time], head[columns.id])


def shipped(model, zero_shot: bool = False):
    """The model as one task for the workers: a shallow copy without the training history tail, which a
    forecast from a given ``df`` never reads (it can be most of a large model's size); a model from
    ``from_pretrained`` (``zero_shot``) as it is."""
    if zero_shot:
        return dask.delayed(model, name=f"forecaster-model-{uuid.uuid4().hex}", traverse=False)
    light = copy.copy(model)
    light.set_fitted(replace(model.state_, history=model.state_.history.iloc[:0]), model.network_, model.device_, [])
    return dask.delayed(light, name=f"forecaster-model-{uuid.uuid4().hex}", traverse=False)


def forecast_frames(model, method: str, df, future_df, **options) -> dd.DataFrame:
    """``model.predict`` or ``model.explain`` (``method``) of Dask frames, as a lazy Dask DataFrame.

    Raises:
        TypeError: ``future_df`` is Dask while ``df`` is pandas or None.
        ValueError: ``df`` lacks the id or time column, or ``future_df`` is None for a model with
            future-known covariates.
    """
    # An unfitted model from ``from_pretrained``: the prior serves each partition (a fitted one forecasts as any other).
    zero_shot = getattr(model, "_follows_data", False) and not hasattr(model, "network_")
    if zero_shot and method != "predict":
        raise ValueError(
            "`explain` of a model from `from_pretrained` takes a pandas `df`: call .compute() on it, or fit the model."
        )
    if not zero_shot:
        model.fitted()  # fitted, with the parameters it was fitted with
    if not is_dask_frame(df):
        held = "None (the training history, in memory)" if df is None else f"a {type(df).__name__}"
        raise TypeError(
            f"`future_df` is a Dask DataFrame but `df` is {held}: the result follows `df`. Pass `df` as a Dask "
            "DataFrame (dask.dataframe.from_pandas) for a Dask result, or `future_df.compute()` for a pandas one."
        )
    id_col, time_col = model.id_col, model.time_col
    in_place = indexed_by_series(df, id_col) and whole_series(df)
    if df.index.name == id_col and id_col not in df.columns and not in_place:  # a series split: shuffle as any frame
        df = flat(df)
    missing = [name for name in (id_col, time_col) if name not in df.columns and not (in_place and name == id_col)]
    if missing:
        raise ValueError(f"`df` lacks column(s) {missing}.")
    if not zero_shot and model.state_.roles.future and future_df is None:
        raise ValueError(
            f"`future_df` is required: the model uses future-known covariates {list(model.state_.roles.future)} "
            f"for the {model.horizon} periods after each series' end."
        )
    npartitions = max(df.npartitions, 1)
    history = df if in_place else by_series(df, id_col, npartitions)
    future = None
    if future_df is not None:
        if not is_dask_frame(future_df):
            future_df = dd.from_pandas(future_df, npartitions=npartitions, sort=False)
        future_in_place = indexed_by_series(future_df, id_col)
        if future_in_place and not in_place:  # keyed by its id column like the history
            future_df, future_in_place = flat(future_df), False
        missing = [
            name for name in (id_col, time_col) if name not in future_df.columns and not (future_in_place and name == id_col)
        ]
        if missing:
            raise ValueError(f"`future_df` lacks column(s) {missing}.")
        future = _on_divisions(future_df, id_col, df.divisions) if in_place else by_series(future_df, id_col, npartitions)
    if zero_shot and model.freq is None:  # read once, as a fitted model's is, not partition by partition
        model = copy.copy(model)
        model.freq = _panel_offset(history, model).freqstr
    meta_frame = df._meta.reset_index() if in_place else df._meta
    meta = output_meta(model, method, meta_frame, options.get("include_padding", False))
    return dd.map_partitions(
        _forecast_partition, history, future, shipped(model, zero_shot), method, meta, options, meta=meta, enforce_metadata=False
    )
