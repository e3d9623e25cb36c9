"""Series of the priors' corpus recognised in a panel, so that a prior never forecasts what it was trained on.

The shipped priors were trained on M3's training parts, each series without its last periods
(``pretraining.corpus.suite_cut``). A fit of a panel that holds an M3 series ending earlier than that (a backtest's
early fold, a sliding fold, or a user's own hold-out) would start from weights that read the series' later values:
its forecasts would not be out of sample, and a score of them would flatter the model.

The corpus is known by every run of ``GRAM`` consecutive values (as float32, hashed: ``gram_keys``) that some later
corpus value follows (``corpus_grams.npz``, built by ``pretraining.corpus.corpus_grams``). A series of a panel whose
last ``GRAM`` observed values are such a run ends before the corpus does: :func:`seen_past_end` names it, wherever the
series starts. Runs of one repeated value are left out (a flat stretch is no fingerprint). A series rescaled, or with
a missing value among its last ``GRAM``, is not recognised.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pandas as pd

# Consecutive values a run of the corpus is known by.
GRAM = 5
CORPUS_GRAMS = Path(__file__).resolve().parent.parent / "pretrained" / "corpus_grams.npz"
_MIX = np.uint64(0x9E3779B97F4A7C15)  # an odd 64-bit constant (the golden ratio's), so that a key mixes every bit


def gram_keys(values: np.ndarray) -> np.ndarray:
    """One uint64 key per row of ``values`` (n, GRAM): the values as float32 bit patterns, mixed in order."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    keys = np.zeros(len(bits), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for column in bits.T:  # GRAM columns, vectorised over rows
            keys = (keys ^ column) * _MIX
            keys ^= keys >> np.uint64(29)
    return keys


@functools.cache
def _corpus_grams() -> dict[str, np.ndarray]:
    """Per prior family, the sorted keys of the corpus runs some later corpus value follows."""
    if not CORPUS_GRAMS.is_file():
        return {}
    with np.load(CORPUS_GRAMS) as table:
        families, keys = table["family"], table["key"]
    return {str(family): np.unique(keys[families == family]) for family in np.unique(families)}


def seen_past_end(frame: pd.DataFrame, id_col: str, target: str, family: str) -> list:
    """Ids of ``frame``'s series that the ``family`` prior's corpus holds past their last observed target.

    ``frame``: the rows a fit trains on, sorted by time within each series.
    """
    table = _corpus_grams().get(family)
    if table is None or len(table) == 0:
        return []
    observed = frame.loc[frame[target].notna().to_numpy(), [id_col, target]]
    last = observed.groupby(id_col, sort=False, observed=True).tail(GRAM)
    counts = last.groupby(id_col, sort=False, observed=True)[target].size()
    whole = counts.index[counts.to_numpy() == GRAM]
    last = last[last[id_col].isin(whole).to_numpy()]
    if last.empty:
        return []
    keys = gram_keys(last[target].to_numpy(dtype=np.float64).reshape(-1, GRAM))
    found = table[np.minimum(np.searchsorted(table, keys), len(table) - 1)] == keys
    return list(last[id_col].to_numpy()[::GRAM][found])
