"""Pretraining the prior: a corpus of synthetic series and M3's training parts, and the loop that learns from it.

``python -m forecaster.pretraining --family monthly --workers 2`` trains one prior (a member per seed, 0 1 2 by
default) and writes it where the package ships it (``forecaster/pretrained``); docs/prior.md is its card. The shipped
weights are loaded by ``forecaster.model.prior``; nothing here runs when a model is fitted or used.
"""

from .corpus import FAMILIES, Family, corpus, suite_cut
from .pretrain import SEEDS, combine_members, pretrain, pretrain_families, pretrain_members, write_prior

__all__ = [
    "FAMILIES",
    "SEEDS",
    "Family",
    "combine_members",
    "corpus",
    "pretrain",
    "pretrain_families",
    "pretrain_members",
    "suite_cut",
    "write_prior",
]
