"""Checks of a categorical static's labels at predict time against the categories it was fitted with.

Unseen labels are allowed (a new series of a new kind gets no category); two slips are not silent: labels retyped as a
whole are refused, and labels that match fitted ones only up to case or spaces are named in a warning.
"""

from __future__ import annotations

import reprlib

import numpy as np
import pandas as pd

from ..callers import warn_user
from .frames import shown_ids
from .seen_values import UnseenValueWarning


def json_value(value: object) -> object:
    """A category value as JSON and the fitted categories hold it: numpy scalars as Python ones."""
    if isinstance(value, (np.generic,)):
        return value.item()
    return value


def _kinds(values) -> set[str]:
    """The kinds of values: text, number (bools apart) or another type's name."""

    def kind(v) -> str:
        if isinstance(v, str):
            return "text"
        if isinstance(v, (bool, np.bool_)):
            return "bool"
        return "number" if isinstance(v, (int, float, np.integer, np.floating)) else type(v).__name__

    return {kind(v) for v in values}


def check_static_types(name: str, known: list, values: list) -> None:
    """Refuse a categorical static whose values are all unknown and of other kinds than the fitted categories.

    New categories are fine (a new series, a new store type); labels retyped as a whole ('A'/'B' read back as 1/2)
    would make every series read the unseen-category input, silently.

    Raises:
        ValueError: naming the column, its fitted categories and the values given.
    """
    fitted, given = _kinds(known), _kinds(values)
    if values and known and not (set(map(json_value, values)) & set(known)) and not (fitted & given):
        raise ValueError(
            f"Static covariate `{name}` was fitted with {'/'.join(sorted(fitted))} labels ({reprlib.repr(list(known))}) "
            f"but holds {'/'.join(sorted(given))} values ({reprlib.repr(list(dict.fromkeys(values)))}), none of them known: "
            "convert the column back to the labels it was fitted with, or refit."
        )


def warn_near_labels(name: str, per_series: pd.DataFrame, unseen: np.ndarray, ids: np.ndarray, known: list) -> None:
    """Warnings for a static's values the fit never saw (``unseen`` rows of ``per_series``): new categories are read as
    none (``UnseenValueWarning``), and values that differ from fitted categories only in case or spaces (a
    misspelling or relabelling) are named with the categories they match."""
    fitted = {str(k).strip().casefold(): k for k in known}
    values = per_series[name].to_numpy()
    folded = pd.Series(values[unseen], dtype=object).astype(str).str.strip().str.casefold()
    near = folded.isin(list(fitted)).to_numpy()  # unseen rows only, without a loop over series
    new = np.flatnonzero(unseen)[~near]
    if len(new):
        warn_user(
            f"Static covariate `{name}` holds categories the fit never saw ({reprlib.repr(list(pd.unique(values[new])))} "
            f"for {len(new)} series such as {shown_ids(ids[new[:3]].tolist())}): they are read as no category (all "
            "zeros), so the forecast of those series reads no effect of the category.",
            UnseenValueWarning,
        )
    if not near.any():
        return
    rows = np.flatnonzero(unseen)[near]
    pairs = dict(zip(values[rows[:20]], (fitted[f] for f in folded.to_numpy()[near][:20]), strict=False))
    shown = ", ".join(f"{v!r} (fitted: {k!r})" for v, k in list(pairs.items())[:3])
    warn_user(
        f"Static covariate `{name}` holds values that match categories it was fitted with only up to case or spaces "
        f"({shown}; {len(rows)} series such as {shown_ids(ids[rows[:3]].tolist())}): they are read as new categories "
        "(all zeros). Give the labels as fitted, or refit."
    )


def warn_statics_ahead(future_df: pd.DataFrame, history: pd.DataFrame, id_col: str, names: tuple[str, ...]) -> None:
    """A warning where ``future_df`` gives a static covariate another value than the history does for a series: the
    forecast reads statics from the history (they hold for the whole series), so a new value there would be ignored
    without a word. Equal values (the whole frame passed along) say nothing."""
    for name in (n for n in names if n in future_df.columns):
        known = history.drop_duplicates(id_col).set_index(id_col)[name]
        ahead = future_df[[id_col, name]].drop_duplicates()
        before = ahead[id_col].map(known)
        differs = (before.notna() & (before.astype(object) != ahead[name].astype(object))).to_numpy()
        if not differs.any():
            continue
        first = ahead.loc[differs].iloc[0]
        series = ahead.loc[differs, id_col].unique()
        warn_user(
            f"`future_df` column `{name}` is a static covariate, which the forecast reads from the history, not from "
            f"`future_df`: it differs from the history's for {len(series)} series such as {shown_ids(series[:3].tolist())} "
            f"({first[name]!r} against {known[first[id_col]]!r}). A static holds for the whole series: give the new "
            "value in the history and refit, or drop the column from `future_df`."
        )
