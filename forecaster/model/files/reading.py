"""Reading a model directory's files: each a regular file within its bound, checked against its recorded SHA-256, and
all of one complete version of the model even while another process saves over it.

``store.load_model`` and ``store.read_fitted`` read through :func:`read_consistent`; a save puts a new folder in place
by renames (``store.save_model``), so a read checks the folder's identity before and after. Format-1 directories (no
manifest; ``config.json`` records the checksums of the two binary files) are read as they were written.
"""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path
from typing import Any

from ..._version import __version__
from .layout import (
    CONFIG,
    FORMAT_VERSION,
    HISTORY,
    MANIFEST,
    MAX_CONFIG_BYTES,
    MAX_MANIFEST_BYTES,
    WEIGHTS,
    Invalid,
    ModelFileError,
    digest,
)
from .schema import MANIFEST_SCHEMA


def _absent(folder: Path) -> ModelFileError:
    """The error for a missing model directory, pointing at a model an interrupted save left beside it."""
    if os.path.lexists(folder):
        return ModelFileError(f"{str(folder)!r} is not a model directory.")
    parent = folder.parent
    siblings = sorted(parent.glob(f".{folder.name}.old-*")) if parent.is_dir() else []
    if siblings:
        return ModelFileError(
            f"No model at {str(folder)!r}: a save to it was interrupted between its two renames (or is in progress). "
            f"The previous model is intact in {str(siblings[-1])!r}; rename that folder to {str(folder)!r} to use it."
        )
    return ModelFileError(f"No model directory at {str(folder)!r}.")


def _read_file(folder: Path, name: str, limit: int | None = None) -> bytes:
    """The bytes of a model file: a regular file (a FIFO would block, a device never end), at most ``limit`` bytes read."""
    path = folder / name
    try:
        mode = path.stat().st_mode
    except OSError as error:
        raise ModelFileError(f"`{name}` in {str(folder)!r} cannot be read ({error.strerror}).") from None
    if not stat.S_ISREG(mode):
        raise ModelFileError(f"`{name}` in {str(folder)!r} is not a regular file; it was not written by `save`.")
    try:
        with open(path, "rb") as handle:
            data = handle.read() if limit is None else handle.read(limit + 1)
    except OSError as error:  # no permission to read it, an I/O error
        raise ModelFileError(f"`{name}` in {str(folder)!r} cannot be read ({error.strerror}).") from None
    if limit is not None and len(data) > limit:
        raise ModelFileError(f"`{name}` in {str(folder)!r} is larger than {limit} bytes; it was not written by `save`.")
    return data


def _parse_json(data: bytes, name: str, folder: Path) -> Any:
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as error:  # invalid JSON or UTF-8, integers too long, nesting too deep
        raise ModelFileError(f"`{name}` in {str(folder)!r} is not valid JSON ({error}).") from error


def _version_error(folder: Path, version: Any) -> ModelFileError:
    return ModelFileError(
        f"Model in {str(folder)!r} has format version {version!r}; this forecaster ({__version__}) reads versions "
        f"1 to {FORMAT_VERSION}. Refit the model with this version."
    )


def _read_files(folder: Path) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The parsed config and the bytes of the binary files, each checked against its recorded SHA-256."""
    if not folder.is_dir():
        raise _absent(folder)
    has_manifest = os.path.lexists(folder / MANIFEST)
    for name in (CONFIG, WEIGHTS, HISTORY):
        if not (folder / name).is_file():
            raise ModelFileError(f"Model directory {str(folder)!r} has no `{name}`; was it written by `save`?")
    if has_manifest:
        manifest = _parse_json(_read_file(folder, MANIFEST, MAX_MANIFEST_BYTES), MANIFEST, folder)
        version = manifest.get("format_version") if isinstance(manifest, dict) else None
        if isinstance(version, int) and not isinstance(version, bool) and version > FORMAT_VERSION:
            raise _version_error(folder, version)
        try:
            MANIFEST_SCHEMA(manifest, "")
        except Invalid as error:
            raise ModelFileError(f"`{MANIFEST}` in {str(folder)!r} is not a manifest `save` writes: {error}") from None
        expected = manifest["sha256"]
    files = {name: _read_file(folder, name, MAX_CONFIG_BYTES if name == CONFIG else None) for name in (CONFIG, WEIGHTS, HISTORY)}
    if has_manifest:
        for name in (CONFIG, WEIGHTS, HISTORY):
            if digest(files[name]) != expected[name]:
                raise ModelFileError(
                    f"`{name}` in {str(folder)!r} does not match its recorded checksum: it was modified or truncated."
                )
    config = _parse_json(files[CONFIG], CONFIG, folder)
    version = config.get("format_version") if isinstance(config, dict) else None
    if has_manifest and version != manifest["format_version"]:
        raise ModelFileError(
            f"`{CONFIG}` in {str(folder)!r} has format version {version!r}, its manifest {manifest['format_version']!r}."
        )
    if not has_manifest:
        if version == 1:
            recorded = config.get("sha256")
            for name in (WEIGHTS, HISTORY):
                if not isinstance(recorded, dict) or digest(files[name]) != recorded.get(name):
                    raise ModelFileError(
                        f"`{name}` in {str(folder)!r} does not match its recorded checksum: it was modified or truncated."
                    )
        elif isinstance(version, int) and not isinstance(version, bool) and 2 <= version <= FORMAT_VERSION:
            raise ModelFileError(
                f"Model directory {str(folder)!r} has no `{MANIFEST}`: the save that wrote it did not finish, "
                "or the file was removed."
            )
        else:
            raise _version_error(folder, version)
    return config, files


# Reads of a folder that a save replaced meanwhile, before a load gives up (waits double from 10 ms: about 2 s in all).
LOAD_ATTEMPTS = 12


def _saving(folder: Path) -> bool:
    """Whether a save to ``folder`` is between its two renames (its previous version set aside beside it)."""
    parent = folder.parent
    return parent.is_dir() and any(parent.glob(f".{folder.name}.old-*"))


def _identity(folder: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(folder)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def read_consistent(folder: Path) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The files of one complete version of the model at ``folder``, even while another process saves over it.

    A save puts a new folder in place by renames, so a load that races it could read some files of the old
    version and some of the new (a false checksum error), or find no folder between the two renames. Each read
    is checked against the folder's identity before and after it, and repeated when the folder was replaced.
    """
    for attempt in range(LOAD_ATTEMPTS):
        before = _identity(folder)
        try:
            files = _read_files(folder)
        except (ModelFileError, OSError) as error:
            after = _identity(folder)
            # Replaced meanwhile, or absent while a save holds the old version aside (between its two renames).
            replaced = after != before or (after is None and _saving(folder))
            if not replaced or attempt == LOAD_ATTEMPTS - 1:
                if replaced and after is not None:  # absent: the error says where the set-aside version is
                    raise ModelFileError(
                        f"Model directory {str(folder)!r} was being replaced by a save while it was read "
                        f"({LOAD_ATTEMPTS} tries); load it again once the save has finished."
                    ) from error
                raise
            time.sleep(min(0.01 * 2**attempt, 0.25))
            continue
        if _identity(folder) == before:
            return files
    raise ModelFileError(
        f"Model directory {str(folder)!r} was being replaced by a save while it was read ({LOAD_ATTEMPTS} tries); "
        "load it again once the save has finished."
    )
