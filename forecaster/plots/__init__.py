"""Forecast and attention plots (matplotlib; every function returns the Figure and never shows it).

Attention weights show where each horizon step *looked* in the history: a diagnostic of routing inside
the network. What each history point contributed to the forecast is its share in ``explain``'s account,
drawn under each map (exact with observation values; integrated gradients with state values).

The plots draw (``forecast``, ``attention``); the numbers they draw are computed in ``attention_analysis``; the
notes, number formatting and file names are in ``text``. Every name is importable from ``forecaster.plots``.
"""

from .attention import plot_attention, plot_attention_profile
from .attention_analysis import (
    AttentionDiagnostics,
    attention_diagnostics,
    attention_grid,
    attention_profile,
    explained_columns,
    forecast_sources,
)
from .forecast import plot_forecast
from .text import (
    CAPTIONS,
    CAUTION,
    GRADIENT_SHARES,
    NOTE_WIDTH,
    OBSERVATION_SHARES,
    ROUTING,
    SHARES,
    account_caption,
    literal,
    readable,
    series_file_name,
)

__all__ = [
    "CAPTIONS",
    "CAUTION",
    "GRADIENT_SHARES",
    "NOTE_WIDTH",
    "OBSERVATION_SHARES",
    "ROUTING",
    "SHARES",
    "AttentionDiagnostics",
    "account_caption",
    "attention_diagnostics",
    "attention_grid",
    "attention_profile",
    "explained_columns",
    "forecast_sources",
    "literal",
    "plot_attention",
    "plot_attention_profile",
    "plot_forecast",
    "readable",
    "series_file_name",
]
