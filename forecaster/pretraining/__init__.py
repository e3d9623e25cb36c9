"""Pretraining the prior: a corpus of synthetic series and M3's training parts, and the loop that learns from it.

``python -m forecaster.pretraining --family monthly --steps 10000`` trains one prior and writes it where the
package ships it (``forecaster/pretrained``); docs/prior.md is its card. The shipped weights are loaded by
``forecaster.model.prior``; nothing here runs when a model is fitted or used.
"""

from .corpus import FAMILIES, Family, corpus, suite_cut
from .pretrain import pretrain, write_prior

__all__ = ["FAMILIES", "Family", "corpus", "pretrain", "suite_cut", "write_prior"]
