"""The prior's corpus: synthetic series and M3's training parts, each cut before the validation suite's first origin.

One corpus per frequency family (:data:`FAMILIES`). Its real part is the training parts of the M3 groups of
that frequency, each series cut at the first rolling origin the validation suite (``benchmarks/suite.py``)
scores for it, so no window the suite scores, and no period of any M3 test part, is in the corpus. Every
other public panel (Tourism, fpp3, the electricity study) stays out: they judge what the prior learnt.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..data.frequency import normalise_freq
from .synthetic import synthetic_panel

# How the validation suite places its origins (benchmarks/suite.py; a test checks that both agree): this many
# origins, ceil(h / 2) apart, the last one h before the end of each training part.
SUITE_ORIGINS = 3
# The horizon the suite scores for each M3 group (the competition's).
M3_HORIZONS = {"yearly": 6, "quarterly": 8, "monthly": 18, "other": 8}
# Where synthetic series end: any date works (a panel aligns series at their ends); this keeps them apart from M3's.
SYNTHETIC_END = pd.Timestamp("1990-01-01")


@dataclass(frozen=True)
class Family:
    """One prior: the frequencies it serves, its window and the corpus it learns from."""

    name: str
    freq: str  # the frequency its corpus is laid on
    season_length: int
    input_size: int
    horizon: int  # the longest horizon it serves; shorter ones use its first steps
    m3_groups: tuple[str, ...]
    n_synthetic: int
    synthetic_lengths: tuple[int, int]


FAMILIES: dict[str, Family] = {
    "yearly": Family("yearly", "YS", 1, 16, 48, ("yearly", "other"), 2000, (20, 100)),
    "quarterly": Family("quarterly", "QS", 4, 24, 48, ("quarterly",), 1500, (24, 160)),
    "monthly": Family("monthly", "MS", 12, 36, 48, ("monthly",), 1500, (48, 300)),
}


def suite_cut(horizon: int) -> int:
    """Periods the corpus drops from the end of a training part: the suite's horizon plus the spacing of its origins."""
    return horizon + (SUITE_ORIGINS - 1) * math.ceil(horizon / 2)


def m3_part(group: str) -> pd.DataFrame:
    """An M3 group's training part, each series without its last ``suite_cut(h)`` periods (ids prefixed ``m3/``)."""
    from ..datasets import load_m3

    frame, _ = load_m3(group, "train")
    rank = frame.groupby("unique_id").cumcount(ascending=False)
    kept = frame[rank >= suite_cut(M3_HORIZONS[group])].copy()
    kept["unique_id"] = "m3/" + kept["unique_id"].astype(str)
    return kept.reset_index(drop=True)


def synthetic_part(family: Family, seed: int) -> pd.DataFrame:
    """The family's synthetic series as a long frame (ids ``synthetic/<i>``), all ending on ``SYNTHETIC_END``."""
    values = synthetic_panel(family.n_synthetic, family.synthetic_lengths, family.season_length, seed)
    lengths = np.array([len(v) for v in values])
    offset = normalise_freq(family.freq)
    end = offset.rollback(SYNTHETIC_END)
    longest = int(lengths.max())
    calendar = pd.date_range(end=end, periods=longest, freq=offset).to_numpy()
    position = np.concatenate([np.arange(longest - n, longest) for n in lengths])
    return pd.DataFrame(
        {
            "unique_id": np.repeat([f"synthetic/{i}" for i in range(len(values))], lengths),
            "ds": calendar[position],
            "y": np.concatenate(values),
        }
    )


def corpus(family: str, seed: int) -> pd.DataFrame:
    """The long frame (``unique_id``, ``ds``, ``y``) the ``family`` prior trains on."""
    spec = FAMILIES[family]
    parts = [synthetic_part(spec, seed)] + [m3_part(group) for group in spec.m3_groups]
    return pd.concat(parts, ignore_index=True)


def corpus_grams() -> dict[str, np.ndarray]:
    """The table ``model.prior_corpus`` recognises corpus series by: for every run of ``GRAM`` consecutive values of
    each family's M3 part (:func:`m3_part`, as the prior trained on it) that a later value of its series follows,
    its family and key; runs of one repeated value left out (``CORPUS_GRAMS``'s arrays)."""
    from ..model.prior_corpus import GRAM, gram_keys

    families, keys = [], []
    for family in FAMILIES.values():
        for group in family.m3_groups:
            part = m3_part(group)
            y = part["y"].to_numpy(dtype=np.float64)
            position = part.groupby("unique_id", sort=False).cumcount().to_numpy()
            size = part.groupby("unique_id", sort=False)["y"].transform("size").to_numpy()
            start = np.flatnonzero(position + GRAM < size)  # a run with at least one corpus value after it
            runs = np.stack([y[start + k] for k in range(GRAM)], axis=1)
            runs = runs[~(runs == runs[:, :1]).all(axis=1)]
            keys.append(gram_keys(runs))
            families.append(np.full(len(runs), family.name))
    return {"family": np.concatenate(families), "key": np.concatenate(keys)}


def write_corpus_grams(path: Path) -> None:
    """Write :func:`corpus_grams` to ``path``, whole or not at all."""
    temp = path.with_name(path.name + ".tmp.npz")
    np.savez_compressed(temp, **corpus_grams())
    os.replace(temp, path)
