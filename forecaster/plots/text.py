"""The words and text of the plots: the note under an attention map, numbers as the plots and reports write them,
text from data drawn as written, and safe file names for files about one series."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.legend import Legend
from matplotlib.text import Text

from ..data.frames import shown_id

ROUTING = "Attention shows where the model looked (routing), not why it forecast what it did."
# The note under a map without shares: a model with log_target has none.
CAUTION = (
    f"{ROUTING} No shares are given for a model with log_target: its parts would add up to the log of the "
    "forecast, not to the forecast."
)
OBSERVATION_SHARES = (
    "Colours: attention weights. With observation values, weight x observation (moved to the target by the seasonal "
    "and trend adjustment, plus its linear-skip term) is each point's exact share of the forecast: the bars below; "
    "the step parts are in their title."
)
GRADIENT_SHARES = (
    "Colours: attention weights, where the network read, not what drove the forecast. The bars below are the shares: "
    "each point's part of what the network adds to the window's level, by integrated gradients from a flat history at "
    "that level; the level and the other step parts are in their title."
)
SHARES = "Colours: attention weights. The bars below are each point's share of the forecast; the step parts are in their title."
# Characters per line of the note under a map (8 pt on a 10-inch figure).
NOTE_WIDTH = 150
# What an ``explain`` frame's account is, by the model's ``attention_values`` (``explain`` records it in ``attrs``).
CAPTIONS = {"observations": OBSERVATION_SHARES, "states": GRADIENT_SHARES}


def account_caption(explanation: pd.DataFrame) -> str:
    """The note under a map: what its colours and bars are, for the account the frame holds (none: routing only)."""
    if "contribution" not in explanation:
        return CAUTION
    return CAPTIONS.get(explanation.attrs.get("attention_values"), SHARES)


def readable(value, digits: int = 4) -> str:
    """``value`` to ``digits`` significant digits in plain decimals, never in scientific notation.

    ``132_100.4`` reads ``132100``, ``0.09034`` reads ``0.09034``, ``1.5e-7`` reads ``0.0000001500``; NaN reads ``""``.
    The reports and the attention plots' titles print every WQL, MASE and share so.
    """
    value = float(value)
    if not np.isfinite(value):
        return "" if np.isnan(value) else str(value)
    if value == 0.0:
        return "0"
    decimals = max(0, digits - 1 - int(np.floor(np.log10(abs(value)))))
    return f"{value:.{decimals}f}"


def literal(*texts: Text | Legend | None) -> None:
    """Draw text made from data (series ids, model and column names) as written.

    Matplotlib reads a string with two ``$`` as mathtext (``price_$1_to_$2`` fails to draw; ``cost $5 to $9``
    draws italics) and, under ``text.usetex``, hands it to TeX. Pass the ``Text`` objects that ``set_title``
    and friends return, or a ``Legend`` for its entries.
    """
    for text in texts:
        for item in text.get_texts() if isinstance(text, Legend) else [] if text is None else [text]:
            item.set_usetex(False)
            item.set_parse_math(False)


def series_file_name(folder: str | Path, prefix: str, unique_id, suffix: str = ".png") -> Path:
    """A path in ``folder`` for a file about one series, safe whatever the id holds.

    The name is ``prefix`` + a slug of the id (``[A-Za-z0-9._-]``, at most 40 characters) + 10 hex digits of the
    SHA-256 of the full id, so ids that slug alike (``a/b``, ``a_b``) get different files, and ``..``, ``/`` or a
    drive cannot lead outside ``folder``.
    """
    text = str(unique_id)
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._-")[:40] or "series"
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    folder = Path(folder)
    path = folder / f"{prefix}{slug}_{digest}{suffix}"
    if path.resolve().parent != folder.resolve():
        raise ValueError(f"The file name for series {shown_id(unique_id)} leads outside {folder}: {path.name!r}.")
    return path
