"""What a model directory is made of: its file names, format version and size bounds, and the error for a broken part.

Every module that writes or reads a part of a model directory names the files and the bounds from here, so that
the schema, the codec and the store agree on them without importing each other. The bounds of the parameters
themselves are the parameter table's (``model.params``), shared with the estimator and the spec reader.
"""

from __future__ import annotations

import hashlib
import io
import reprlib
import zipfile
from typing import Any

FORMAT_VERSION = 2
CONFIG, WEIGHTS, HISTORY, MANIFEST = "config.json", "weights.pt", "history.npz", "manifest.json"
MODEL_FILES = (CONFIG, WEIGHTS, HISTORY, MANIFEST)

# Bounds on what a model file may ask ``load`` to allocate beyond the parameters'. Real models sit far inside them.
MAX_FEATURES = 100_000  # covariates, categories, network inputs per step
MAX_SERIES = 10_000_000
MAX_CONFIG_BYTES = 256 * 2**20
MAX_MANIFEST_BYTES = 2**16


class ModelFileError(ValueError):
    """A model directory is missing, incomplete, tampered with or from an incompatible version."""


class Invalid(Exception):
    """A part of a model file breaks the schema; ``load_model`` turns it into a ModelFileError naming the folder."""


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def show(value: Any) -> str:
    return reprlib.repr(value)


def check_zip(data: bytes, name: str) -> None:
    """Refuse archives that would expand far beyond their size (both files are uncompressed zip archives)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            size = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, ValueError) as error:
        raise Invalid(f"`{name}` is not a readable archive ({error}).") from None
    if size > 2 * len(data) + 2**20:
        raise Invalid(f"`{name}` would expand to {size} bytes from {len(data)}; it was not written by `save`.")
