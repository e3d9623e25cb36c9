"""Checks on user DataFrames, with errors that name the column, series or timestamp at fault.

Every function here works on a copy: the caller's DataFrame is never modified.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..callers import user_stacklevel, warn_user
from .arrow import plain_columns
from .clock_changes import repeated_hour_hint, series_step
from .dates import (
    AmbiguousDatesError,
    UnreadableDatesError,
    periods_message,
    read_text_dates,
    restore_zone,
    shown_time,
    zone_name,
)
from .frames import require_columns, require_frame, shown_id, shown_ids
from .ordering import in_series_order
from .roles import CovariateRoles, refuse_unknown_ahead


class ColumnTypeError(TypeError, ValueError):
    """A column has the wrong dtype (a TypeError that ``except ValueError`` also catches)."""


@dataclass(frozen=True)
class Columns:
    """Names of the id, time and target columns."""

    id: str = "unique_id"
    time: str = "ds"
    target: str = "y"

    @classmethod
    def from_params(cls, params: dict) -> Columns:
        """The column names an estimator's parameters (``id_col``, ``time_col``, ``target_col``) declare."""
        return cls(params["id_col"], params["time_col"], params["target_col"])


def columns_and_roles(params: dict) -> tuple[Columns, CovariateRoles]:
    """The column names and covariate roles an estimator's parameters declare (``model.get_params()``)."""
    return Columns.from_params(params), CovariateRoles.from_params(params)


def _first_row(df: pd.DataFrame, mask: np.ndarray, columns: Columns, tz: str | None = None) -> str:
    """Where the first masked row is, its time as the user's data wrote it (``tz``: the token of a naive frame's zone)."""
    row = df.loc[mask].iloc[0]
    return f"series {shown_id(row[columns.id])} at {when(shown_time(row[columns.time], tz) if tz else row[columns.time])}"


def when(timestamp) -> str:
    """A timestamp for messages: the date alone when it is midnight."""
    stamp = pd.Timestamp(timestamp)
    return str(stamp.date()) if stamp == stamp.normalize() else str(stamp)


def _to_naive_times(values: pd.Series, column: str, tz_token: str | None = None) -> tuple[pd.Series, str | None]:
    """Timestamps made tz-naive, plus a token saying how to restore the zone.

    Daily or coarser data (every local time at one time of day: midnight, or a reading at 17:30) keeps its
    local wall time, so a month stays on its first day and a daily reading on its day across daylight-saving
    changes; sub-daily data is converted to UTC, which has no daylight-saving gaps or repeats.
    The token is ``"wall:<tz>"`` or ``"utc:<tz>"``.
    """
    if not pd.api.types.is_datetime64_any_dtype(values):
        if pd.api.types.is_numeric_dtype(values) or values.dtype == bool:
            example = values.iloc[0] if len(values) else None
            raise ColumnTypeError(
                f"Column `{column}` holds numbers ({values.dtype}, e.g. {example!r}), not timestamps. Integer time "
                "indexes are not supported: converting numbers directly would read them as nanoseconds after 1970. "
                f"Give each row its date instead, e.g. years: pd.to_datetime(df['{column}'].astype(str), format='%Y'); "
                f"periods numbered from 1: pd.Timestamp('2000-01-01') + pd.to_timedelta(df['{column}'] - 1, unit='D') "
                "with freq='D' and an explicit season_length."
            )
        if isinstance(values.dtype, pd.PeriodDtype):
            raise ColumnTypeError(periods_message(values.dtype, column))
        values = _text_times(values, column)
    if values.isna().any():
        raise ValueError(f"Column `{column}` holds missing timestamps (NaT) at {int(values.isna().sum())} row(s).")
    tz = getattr(values.dt, "tz", None)
    coarse = getattr(values.dt, "unit", "ns") != "ns"  # only units coarser than ns reach past the span of ns
    wall = values if tz is None or not coarse else values.dt.tz_localize(None)
    if coarse and (wall.min() < pd.Timestamp.min or wall.max() > pd.Timestamp.max):
        raise ValueError(
            f"Column `{column}` holds timestamps from {wall.min()} to {wall.max()}, outside the span of pandas' "
            f"timestamps ({pd.Timestamp.min.date()} to {pd.Timestamp.max.date()}); shift them into it by a multiple of "
            "400 years, which keeps every date's weekday."
        )
    if tz is None:
        return values.astype("datetime64[ns]"), tz_token
    local = values.dt.tz_localize(None)
    # One time of day throughout (midnight, or a daily reading at 17:30): daily or coarser data, which follows the
    # local calendar across daylight-saving changes; several times of day: sub-daily data, read in UTC.
    one_time = len(local) == 0 or (local - local.dt.normalize()).nunique() == 1
    mode = tz_token.split(":", 1)[0] if tz_token else ("wall" if one_time else "utc")
    naive = local if mode == "wall" else values.dt.tz_convert("UTC").dt.tz_localize(None)
    return naive.astype("datetime64[ns]"), f"{mode}:{zone_name(tz, column)}"


def _text_times(values: pd.Series, column: str) -> pd.Series:
    """A column of text (or timestamp objects) as timestamps, read one way only (``dates.read_text_dates``).

    Raises:
        ColumnTypeError: the text reads differently day first and month first, or does not parse; naming the column.
    """
    try:
        return read_text_dates(values, f"Column `{column}`")
    except AmbiguousDatesError as error:
        raise ColumnTypeError(
            f"Column `{column}` holds dates such as {error.example!r} that read differently day first and month first. "
            f"Parse it with its format before passing it: df['{column}'] = pd.to_datetime(df['{column}'], "
            "format='%d/%m/%Y') for day first, or format='%m/%d/%Y' for month first (with your separator)."
        ) from None
    except UnreadableDatesError as error:
        raise ColumnTypeError(
            f"Column `{column}` could not be parsed as timestamps ({error}; e.g. {error.example!r}); convert it with "
            f"pd.to_datetime(df['{column}'], format=...)."
        ) from None


# The largest magnitude a target or numeric covariate may have. Scaling squares values (a standard deviation of
# 1e300 overflows to inf), and past about 1e150 the partners' fits and the interval choice lose precision, so
# larger values are refused, naming the column, rather than turned into inf or a silently different forecast.
MAX_MAGNITUDE = 1e100


def _check_magnitude(values: np.ndarray, name: str, where) -> None:
    """Refuse values beyond ``MAX_MAGNITUDE``; ``where(mask)`` names the first row holding one."""
    huge = np.abs(values) > MAX_MAGNITUDE
    if huge.any():
        raise ValueError(
            f"Column `{name}` holds {values[huge][0]:.3g} at {where(huge)}: values beyond {MAX_MAGNITUDE:.0e} in magnitude are "
            "outside the supported range (scaling them would overflow); rescale the column, e.g. to other units."
        )


def _numeric_column(df: pd.DataFrame, name: str, columns: Columns, allow_bool: bool, nan: bool = True) -> pd.Series:
    """``df[name]`` as float64, refused unless numeric (``allow_bool``: flags too) and finite (``nan``: NaN allowed)."""
    values = df[name]
    if values.dtype == bool or pd.api.types.is_bool_dtype(values):
        if not allow_bool:
            raise ColumnTypeError(f"Column `{name}` is boolean; the target must be numeric (int or float).")
        return values.astype(np.float64)
    if not pd.api.types.is_numeric_dtype(values):
        odd = (pd.to_numeric(values, errors="coerce").isna() & values.notna()).to_numpy()  # text such as "n/a"
        at = f" (first {values[odd].iloc[0]!r} at {_first_row(df, odd, columns)})" if odd.any() else ""
        raise ColumnTypeError(f"Column `{name}` must be numeric; found dtype {values.dtype}{at}.")
    values = values.astype(np.float64)
    infinite = np.isinf(values.to_numpy())
    if infinite.any():
        fix = "a finite value or NaN" if nan else "a finite value"
        raise ValueError(f"Column `{name}` holds inf at {_first_row(df, infinite, columns)}; replace it with {fix}.")
    _check_magnitude(values.to_numpy(), name, lambda mask: _first_row(df, mask, columns))
    return values


def check_id_types(ids: pd.Series | pd.Index, other: pd.Series | pd.Index, column: str, label: str, other_label: str) -> None:
    """Refuse ids of ``other`` that match none of ``ids`` by value but some as text (the integer 7 against the string
    '7'), naming both dtypes. ``label`` / ``other_label``: how the message names the frames of ``other`` and ``ids``.

    Without it the rows of one frame match none of the other's, and the error that follows (a series not in the
    history, a covariate missing) names ids that look the same in both frames. Ids that match by value (object
    columns of Python ints against int64) pass, as the join reads them.
    """
    if ids.dtype == other.dtype and ids.dtype != object:
        return
    mine, theirs = pd.Index(pd.unique(np.asarray(ids))), pd.Index(pd.unique(np.asarray(other)))
    unmatched = theirs[~theirs.isin(mine)]
    if not len(unmatched):
        return
    as_text = set(unmatched.astype(str)) & set(mine.astype(str))
    if as_text:
        example = sorted(as_text)[0]
        raise ValueError(
            f"{label} has `{column}` values of dtype {other.dtype} and {other_label} of dtype {ids.dtype}: "
            f"ids such as {example!r} match only as text. Give both frames the same id type."
        )


def _check_duplicates(df: pd.DataFrame, columns: Columns, argument: str, naive: bool = False) -> None:
    """Refuse repeated (id, time) pairs; ``naive``: the times were given without a zone, so an hour repeated where
    clocks go back is told apart (``clock_changes``)."""
    duplicated = df.duplicated([columns.id, columns.time], keep=False).to_numpy()
    if duplicated.any():
        hint = ""
        if naive:  # the involved series' step: a repeated hour exists only in data spaced under a day
            involved = df[columns.id].isin(df.loc[duplicated, columns.id]).to_numpy()
            step = series_step(df.loc[involved, columns.time], df.loc[involved, columns.id])
            hint = repeated_hour_hint(df.loc[duplicated, columns.time], columns.time, columns.id, step)
        raise ValueError(
            f"`{argument}` has duplicate ({columns.id}, {columns.time}) rows, first at "
            f"{_first_row(df, duplicated, columns)} ({int(duplicated.sum())} rows involved).{hint}"
        )


def clean_history(
    df: pd.DataFrame, columns: Columns, roles: CovariateRoles, argument: str = "df"
) -> tuple[pd.DataFrame, str | None]:
    """Validate a history frame and return a sorted, typed copy and its time zone.

    Missing targets are kept as NaN (masked later, never imputed into the loss). Future-known covariates must be
    complete; past covariates may be NaN (filled with the training mean after scaling).
    """
    require_frame(df, argument)
    needed = [columns.id, columns.time, columns.target, *roles.all]
    require_columns(df, needed, argument)
    frame = plain_columns(df.loc[:, needed], [columns.id, columns.time, *roles.static])
    if frame[columns.id].isna().any():
        raise ValueError(f"Column `{columns.id}` holds missing ids.")
    if isinstance(frame[columns.id].dtype, pd.CategoricalDtype):  # a filtered panel keeps categories it no longer has
        frame[columns.id] = frame[columns.id].cat.remove_unused_categories()
    frame[columns.time], tz = _to_naive_times(frame[columns.time], columns.time)
    frame[columns.target] = _numeric_column(frame, columns.target, columns, allow_bool=False)
    for name in roles.future + roles.past:  # a future-known covariate must be complete: no NaN to suggest
        frame[name] = _numeric_column(frame, name, columns, allow_bool=True, nan=name not in roles.future)
    _check_duplicates(frame, columns, argument, naive=tz is None)
    frame = in_series_order(frame, columns.id, columns.time)
    observed = frame[columns.target].notna().groupby(frame[columns.id], sort=False, observed=True).any()
    if not observed.all():
        empty = list(observed.index[~observed.to_numpy()])
        raise ValueError(f"Series {shown_ids(empty)} have no observed value of `{columns.target}`.")
    frame, ended = observed_span(frame, columns)  # rows outside it are no history: their covariates are not read
    for name in roles.future:
        missing = frame[name].isna().to_numpy()
        if missing.any():
            raise ValueError(
                f"Future-known covariate `{name}` is missing at {_first_row(frame, missing, columns, tz)}; "
                "future-known covariates must be complete."
            )
    _check_statics(frame, columns, roles)
    if len(ended):
        warn_ended_early(pd.Series(restore_zone(pd.DatetimeIndex(ended.to_numpy()), tz), index=ended.index), columns, argument)
    return frame, tz


def observed_span(frame: pd.DataFrame, columns: Columns) -> tuple[pd.DataFrame, pd.Series]:
    """``frame`` (sorted by series and time) cut to each series' first-to-last observed target, and the last
    observation of each series that had rows after it.

    Rows before a series' first observed target are no history, and rows after its last one are no history
    either: a series whose rows run on with empty targets (a wide table melted to long form) has ended there.
    Every model, baseline, scale and score reads a series only over this span, so a panel's results do not
    depend on whether its file holds such rows. Returns the cut frame and, for each series cut at its end, the
    timestamp of its last observed target (the origin it is forecast from).
    """
    observed = frame[columns.target].notna().to_numpy()
    if observed.all():
        return frame, pd.Series(dtype="datetime64[ns]")
    codes = pd.factorize(frame[columns.id], sort=False)[0]
    started = pd.Series(observed).groupby(codes, sort=False).cummax().to_numpy()
    still_to_come = pd.Series(observed[::-1]).groupby(codes[::-1], sort=False).cummax().to_numpy()[::-1]
    keep = started & still_to_come
    if keep.all():
        return frame, pd.Series(dtype="datetime64[ns]")
    after = ~still_to_come
    cut_ids = pd.unique(frame[columns.id].to_numpy()[after])
    out = frame.loc[keep].reset_index(drop=True)
    last = out.groupby(columns.id, sort=False, observed=True)[columns.time].max()
    return out, last[last.index.isin(cut_ids)]


def warn_ended_early(ended: pd.Series, columns: Columns, argument: str = "df") -> None:
    """One warning naming the series whose rows ran on past their last observed target (see :func:`observed_span`)."""
    examples = ", ".join(f"{shown_id(uid)} at {when(stamp)}" for uid, stamp in list(ended.items())[:3])
    warn_user(
        f"`{argument}`: rows after the last observed `{columns.target}` hold no target in {len(ended)} series (last "
        f"observations: {examples}{', ...' if len(ended) > 3 else ''}). Each such series ends at its last observation "
        "and is forecast from there (its dates continue from it); a horizon's known covariates belong in `future_df`."
    )


def _check_statics(frame: pd.DataFrame, columns: Columns, roles: CovariateRoles) -> None:
    for name in roles.static:
        if frame[name].isna().any():
            raise ValueError(
                f"Static covariate `{name}` is missing at {_first_row(frame, frame[name].isna().to_numpy(), columns)}."
            )
        varies = frame.groupby(columns.id, sort=False, observed=True)[name].nunique() > 1
        if varies.any():
            raise ValueError(
                f"Static covariate `{name}` varies within series {shown_ids(varies.index[varies])}; "
                "a static covariate must be constant per series."
            )
        if pd.api.types.is_numeric_dtype(frame[name]) and not pd.api.types.is_bool_dtype(frame[name]):
            numbers = frame[name].to_numpy(dtype=float)
            if np.isinf(numbers).any():
                raise ValueError(f"Static covariate `{name}` holds inf.")
            _check_magnitude(numbers, name, lambda mask: _first_row(frame, mask, columns))


def merge_covariates(
    df: pd.DataFrame, covariates: pd.DataFrame, columns: Columns, roles: CovariateRoles, argument: str = "future_covariates_df"
) -> tuple[pd.DataFrame, str | None]:
    """``df`` with its future-known covariates taken from ``covariates`` (same ids and timestamps), and its zone.

    A declared future-known covariate must be a column of one frame only: a column of both is refused by name.

    Both frames are checked before they are joined, so an error names the frame at fault: a missing
    column, an unparseable or duplicated timestamp. Timestamps are matched as ``clean_history`` reads
    them (strings parsed, zones made naive), and the returned token restores ``df``'s zone. A row of
    ``df`` without its covariates is left NaN, which ``clean_history`` then refuses by name.
    """
    require_frame(df, "df")
    require_frame(covariates, argument)
    require_columns(df, [columns.id, columns.time], "df")
    refuse_unknown_ahead(covariates, argument, columns.target, roles)
    both = [name for name in roles.future if name in df.columns and name in covariates.columns]
    if both:  # which values would the forecasts see? Taking either in silence scores the other's forecasts
        listed = ", ".join(f"`{name}`" for name in both)
        raise ValueError(
            f"Future-known covariate(s) {listed} are columns of both `df` and `{argument}`: give each in one frame "
            f"(drop them from `df` to forecast with the values of `{argument}`, e.g. forecasts of the weather)."
        )
    wanted = [name for name in roles.future if name not in df.columns]
    require_columns(covariates, [columns.id, columns.time, *wanted], argument)
    history = plain_columns(df, [columns.id, columns.time])
    history[columns.time], tz = _to_naive_times(history[columns.time], columns.time)
    extra = plain_columns(covariates.loc[:, [columns.id, columns.time, *wanted]], [columns.id, columns.time])
    times, other = _to_naive_times(extra[columns.time], columns.time)  # parsed, and its own zone (None: naive)
    if (tz is None) != (other is None):  # naive wall times against zoned ones: no way to tell which instants match
        zoned, naive = ("df", argument) if tz else (argument, "df")
        raise ValueError(f"`{zoned}` has time-zone-aware `{columns.time}` and `{naive}` naive ones; give both in the same zone.")
    if tz is not None:  # the same instants, read as df's are (its zone, its wall or UTC times)
        zone = tz.split(":", 1)[1]
        times, _ = _to_naive_times(pd.to_datetime(extra[columns.time]).dt.tz_convert(zone), columns.time, tz)
    extra[columns.time] = times
    _check_duplicates(extra, columns, argument)
    check_id_types(history[columns.id], extra[columns.id], columns.id, f"`{argument}`", "`df`")
    if history[columns.id].dtype != extra[columns.id].dtype:  # e.g. categorical ids in one frame, strings in the other
        history[columns.id], extra[columns.id] = history[columns.id].astype(object), extra[columns.id].astype(object)
    return history.merge(extra, on=[columns.id, columns.time], how="left", validate="many_to_one"), tz


def _future_times(values: pd.Series, column: str, tz_token: str | None) -> pd.Series:
    """The future frame's timestamps read as the history's are: the same zone (wall or UTC times), or both naive.

    Naive times against a zoned history (or the reverse) are refused: there is no way to tell which instants
    they mean (naive times read as UTC shifted a day-ahead schedule by the zone's offset).
    """
    times, own = _to_naive_times(values, column)  # parsed, and the future's own zone (None: naive)
    text = pd.api.types.is_object_dtype(values) or pd.api.types.is_string_dtype(values)
    if tz_token is None and text and own is not None and own.startswith("wall:"):
        return times  # dates written with UTC offsets, as a history read as local dates was (dates.in_utc_if_offsets_differ)
    if (tz_token is None) != (own is None):
        zoned, naive = ("df", "future_df") if tz_token else ("future_df", "df")
        raise ValueError(f"`{zoned}` has time-zone-aware `{column}` and `{naive}` naive ones; give both in the same zone.")
    if tz_token is None:
        return times
    zone = tz_token.split(":", 1)[1]
    converted, _ = _to_naive_times(pd.to_datetime(values).dt.tz_convert(zone), column, tz_token)
    return converted


def clean_future(future_df: pd.DataFrame, columns: Columns, roles: CovariateRoles, tz_token=None, set_aside=()) -> pd.DataFrame:
    """Validate a frame of future-known covariates for the horizon.

    Columns that are neither keys, declared future-known covariates nor statics are not read, and a warning names
    them: a covariate given for the horizon but never declared would otherwise change nothing without a word. The
    covariates ``set_aside`` (declared at fit, not read by the fit, whose warning said so) are not read silently.

    Raises:
        LeakageError: it carries the target or a past-only covariate.
    """
    require_frame(future_df, "future_df")
    refuse_unknown_ahead(future_df, "future_df", columns.target, roles)
    needed = [columns.id, columns.time, *roles.future]
    require_columns(future_df, needed, "future_df")
    unread = [name for name in future_df.columns if name not in (*needed, *roles.static, *set_aside)]
    if unread:  # the usual slip: a covariate given for the horizon but never declared
        warnings.warn(
            f"`future_df` columns {', '.join(f'`{c}`' for c in unread)} are not declared future-known covariates, so the "
            "forecasts do not read them; declare them with `future_covariates=[...]` (and refit) to use them.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
    frame = plain_columns(future_df.loc[:, needed], [columns.id, columns.time])
    frame[columns.time] = _future_times(frame[columns.time], columns.time, tz_token)
    for name in roles.future:  # missing values and duplicates are refused where the horizon's rows are placed
        frame[name] = _numeric_column(frame, name, columns, allow_bool=True, nan=False)
    return in_series_order(frame, columns.id, columns.time)


def check_future_rows(rows: pd.DataFrame, columns: Columns, roles: CovariateRoles) -> None:
    """Refuse the rows of ``future_df`` a forecast reads (its series' horizons) where a covariate is missing or a
    (series, time) pair repeats; rows it does not read (later dates, other series) are not checked."""
    for name in roles.future:
        missing = rows[name].isna().to_numpy()
        if missing.any():
            raise ValueError(f"`future_df` column `{name}` is missing at {_first_row(rows, missing, columns)}.")
    _check_duplicates(rows, columns, "future_df")
