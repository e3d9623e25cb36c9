"""Series of the priors' corpus recognised in a panel, so that a prior never forecasts what it was trained on.

The shipped priors were trained on M3's training parts, each series without its last periods
(``pretraining.corpus.suite_cut``). A fit of a panel that holds an M3 series cut earlier than that (a backtest's
early fold, or a user's own hold-out) would start from weights that read the series' later values: its forecasts
would not be out of sample, and a score of them would flatter the model.

Each corpus series is known by its first ``START_VALUES`` values (as float32, hashed: ``start_keys``) and by how many
periods of it the corpus holds (``corpus_starts.npz``, built by ``pretraining.corpus.corpus_starts``). A series of a
panel whose first observed values match one, and whose observed span is shorter than what the corpus holds of it, is
named by :func:`seen_past_end`. A series that starts later than its M3 original (a tail of it), or whose values were
rescaled, is not recognised.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pandas as pd

# Values each corpus series is known by, from its first observation.
START_VALUES = 4
CORPUS_STARTS = Path(__file__).resolve().parent.parent / "pretrained" / "corpus_starts.npz"
_MIX = np.uint64(0x9E3779B97F4A7C15)  # an odd 64-bit constant (the golden ratio's), so that a key mixes every bit


def start_keys(values: np.ndarray) -> np.ndarray:
    """One uint64 key per row of ``values`` (n, START_VALUES): the values as float32 bit patterns, mixed in order."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    keys = np.zeros(len(bits), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for column in bits.T:  # START_VALUES columns, vectorised over series
            keys = (keys ^ column) * _MIX
            keys ^= keys >> np.uint64(29)
    return keys


@functools.cache
def _corpus_starts() -> dict[str, pd.Series]:
    """Per prior family: the periods the corpus holds of each series, indexed by the series' start key."""
    if not CORPUS_STARTS.is_file():
        return {}
    with np.load(CORPUS_STARTS) as table:
        frame = pd.DataFrame({"family": table["family"], "key": table["key"], "length": table["length"]})
    # Two corpus series with one start: the longer one counts (a series matching either is judged against it).
    longest = frame.groupby(["family", "key"])["length"].max()
    return {family: longest.loc[family] for family in longest.index.get_level_values(0).unique()}


def seen_past_end(frame: pd.DataFrame, id_col: str, target: str, family: str) -> list:
    """Ids of ``frame``'s series that the ``family`` prior's corpus holds past their last observed target.

    ``frame``: the rows a fit trains on, sorted by time within each series, one row per period.
    """
    lengths = _corpus_starts().get(family)
    if lengths is None:
        return []
    ids = frame[id_col].to_numpy()
    observed = frame[target].notna().to_numpy()
    first = pd.Series(observed).groupby(ids, sort=False).cumsum().to_numpy()  # observed values up to each row
    rows = frame.loc[observed & (first <= START_VALUES), [id_col, target]]
    counts = rows.groupby(id_col, sort=False, observed=True)[target].size()
    whole = counts.index[counts.to_numpy() == START_VALUES]
    if len(whole) == 0:
        return []
    rows = rows[rows[id_col].isin(whole)]
    keys = start_keys(rows[target].to_numpy(dtype=np.float64).reshape(-1, START_VALUES))
    corpus = lengths.reindex(keys).to_numpy()
    matched = ~np.isnan(corpus)
    if not matched.any():
        return []
    # Each matched series' observed span in periods (rows from its first to its last observed target).
    seen = pd.DataFrame({"id": ids[observed], "at": np.flatnonzero(observed)}).groupby("id", sort=False)["at"]
    span = seen.max() - seen.min() + 1
    series = rows[id_col].to_numpy()[::START_VALUES][matched]
    short = span.reindex(series).to_numpy() < corpus[matched]
    return list(series[short])
