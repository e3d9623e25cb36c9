"""A fold's horizon rows: each series needs one per step where future-known covariates are read.

With ``fill_gaps=True`` an absent row of the history is read as a missing target, and the fit fills its covariates.
An absent row inside a fold's horizon is another matter: the decoder reads its future-known covariates, which are
not in the data. A refitted fold failed there with a message about a ``future_df`` the user never passed; a one-pass
backtest forecast the step with the covariate at its training mean, without a word. Both now refuse it, naming the
row to add.
"""

from __future__ import annotations

import pandas as pd

from ..data.dates import shown_time
from ..data.frames import shown_id
from ..data.validation import Columns, when


def check_horizon_rows(future: pd.DataFrame, fold, columns: Columns, names: tuple[str, ...], horizon: int, offset) -> None:
    """Refuse a fold whose ``future`` (its future-known covariates) lacks a row of a series' horizon.

    Raises:
        ValueError: naming the first such series, the fold, and (where ``offset`` is known) the first missing time.
    """
    counts = future.groupby(columns.id, sort=False, observed=True).size().reindex(fold.cutoffs.index, fill_value=0)
    short = counts.index[counts.to_numpy() < horizon]
    if len(short) == 0:
        return
    uid, cutoff = short[0], fold.cutoffs[short[0]]
    at = ""
    if offset is not None:
        steps = pd.date_range(cutoff, periods=horizon + 1, freq=offset)[1:]
        held = pd.DatetimeIndex(future.loc[future[columns.id] == uid, columns.time])
        at = f" at {when(shown_time(steps.difference(held)[0], None))}"  # in the data's zone (a backtest's)
    raise ValueError(
        f"`df` has no row for series {shown_id(uid)}{at}, a step of fold {fold.number}'s horizon "
        f"(cutoff {when(shown_time(cutoff, None))}; "
        f"{len(short)} series lack{'s' if len(short) == 1 else ''} such rows). The fold's forecast reads the "
        f"future-known covariates ({', '.join(f'`{n}`' for n in names)}) of every step: with fill_gaps=True an "
        "absent row is a missing target, but its covariates are unknown. Add the row with its covariates and a NaN "
        "target."
    )
