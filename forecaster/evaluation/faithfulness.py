"""The occlusion check, under the name it was documented by: it lives in :mod:`forecaster.model.faithfulness` (a
diagnostic of a fitted model, which ``plots`` uses too), and these names stay so that code written against them works."""

from ..model.faithfulness import MAX_SERIES, RANKINGS, Occlusion, occlusion, occlusions

__all__ = ["MAX_SERIES", "RANKINGS", "Occlusion", "occlusion", "occlusions"]
