"""Save and load fitted models without pickle: atomically, and with every file checked before it is used.

A model directory (format 2) holds:

* ``config.json``: the parameters, the fitted state (``FittedState.to_dict``) and how each history
  column is encoded. Categories and series ids are typed (``{"type": "int", "value": 1}``), so that
  ``1``, ``"1"``, ``1.0`` and timestamps come back as themselves.
* ``weights.pt``: a plain tensor state dict, read with ``torch.load(weights_only=True)``.
* ``history.npz``: the history tail used by ``predict()``, read with ``allow_pickle=False``; each
  column keeps its dtype (categorical, time zone, mixed-type object columns included).
* ``manifest.json``, written last: the format version and a SHA-256 of each of the three files.

``save`` builds every file in memory (``codec``), writes them into a new hidden folder next to the target (same
file system), fsyncs them and swaps that folder in by renames, so ``path`` holds the old complete model or the
new one, never a mix. Nothing in the target is opened for writing, so a symlink there is never followed. Each
file-system step (``write_file``, ``fsync_dir``, ``rename``, ``new_sibling``, ``remove``) is a function of its own,
so that a test can make one step fail.

``load`` reads each file once, refuses it unless it matches the manifest, then validates the config against
its schema (``schema``) and the parts against each other and against the shapes of the weights (``agreement``)
before allocating the network. Every refusal is a :class:`ModelFileError` that names the file or the key at
fault. Format-1 files (no manifest; ``config.json`` records the checksums of the two binary files) still load and
forecast as they did.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import shutil
import stat
import time
import warnings
from pathlib import Path
from typing import Any

from ..._version import __version__
from ...data.frequency import normalise_freq
from ...data.validation import Columns, clean_history
from ..network import Ensemble
from ..state import FittedState
from .agreement import check_agreement, check_bounds, complete_params, estimator_from_params
from .codec import encode_model, read_history, read_network
from .layout import (
    CONFIG,
    FORMAT_VERSION,
    HISTORY,
    MANIFEST,
    MAX_CONFIG_BYTES,
    MAX_MANIFEST_BYTES,
    MODEL_FILES,
    WEIGHTS,
    Invalid,
    digest,
    show,
)
from .migration import upgraded_state
from .schema import MANIFEST_SCHEMA, config_schema


def write_file(path: Path, data: bytes) -> None:
    """Create ``path`` (never an existing file or a symlink) with ``data``, flushed to disk."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    with os.fdopen(os.open(path, flags, 0o666), "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def fsync_dir(path: Path) -> None:
    """Make renames and new entries in a directory durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def rename(source: Path, target: Path) -> None:
    os.rename(source, target)


def new_sibling(folder: Path, tag: str, create: bool) -> Path:
    """A fresh hidden name next to ``folder``: ``.<name>.<tag>-<random>`` (created as a directory when asked)."""
    while True:
        candidate = folder.parent / f".{folder.name}.{tag}-{secrets.token_hex(6)}"
        if not create:
            if not os.path.lexists(candidate):
                return candidate
            continue
        try:
            candidate.mkdir(mode=0o777)  # the umask applies, as for any folder the user creates
            return candidate
        except FileExistsError:
            continue


def remove(path: Path) -> None:
    if path.is_symlink():
        path.unlink()
    else:
        shutil.rmtree(path)


__all__ = [
    "CONFIG",
    "FORMAT_VERSION",
    "HISTORY",
    "MANIFEST",
    "MODEL_FILES",
    "WEIGHTS",
    "ModelFileError",
    "load_model",
    "read_fitted",
    "save_model",
]


class ModelFileError(ValueError):
    """A model directory is missing, incomplete, tampered with or from an incompatible version."""


# ---------------------------------------------------------------------------- save
def _check_target(folder: Path) -> None:
    """Refuse to replace anything but a model directory (or a symlink, which is replaced, never followed)."""
    if folder.is_symlink() or not os.path.lexists(folder):
        return
    if not folder.is_dir():
        raise FileExistsError(f"{str(folder)!r} exists and is not a directory; `save` writes a model directory there.")
    here = Path(os.getcwd()).resolve()
    if here == folder.resolve() or folder.resolve() in here.parents:
        raise FileExistsError(
            f"{str(folder)!r} holds the current working directory; `save` replaces the whole directory, which would "
            "leave this process in a deleted folder. Save from outside it (e.g. save('../' + name)) or to another path."
        )
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:  # another save set it aside meanwhile: nothing there to protect
        return
    foreign = sorted(entry.name for entry in entries if entry.name not in MODEL_FILES or entry.is_dir(follow_symlinks=False))
    if foreign:
        raise FileExistsError(
            f"{str(folder)!r} holds {show(foreign)}, which a model directory does not; `save` replaces the whole "
            "directory, so it refuses. Save to a new or empty directory, or to one holding only a model."
        )


# Times a save puts its model in place while other saves to the same folder keep replacing it, before it gives up.
SAVE_ATTEMPTS = 50


def _taken(error: OSError) -> bool:
    """Whether a rename failed because its target exists again: another save put its model there meanwhile."""
    return isinstance(error, FileExistsError) or error.errno in (errno.EEXIST, errno.ENOTEMPTY)


def _discard(aside: Path) -> None:
    """Delete a model set aside by a save; a failure leaves it there, with a warning saying where."""
    try:
        remove(aside)
    except OSError as error:
        warnings.warn(
            f"The model was saved, but its previous version in {str(aside)!r} could not be removed: {error}", stacklevel=6
        )


def _swap_once(temp: Path, folder: Path) -> bool:
    """One try at putting the complete model in ``temp`` at ``folder`` by renames; False when another save to the same
    folder moved it meanwhile (nothing is lost: the caller tries again).

    Without an old model: one rename. With one: rename it aside (``.<name>.old-*``), rename the new one in,
    then delete the old. If the second rename fails the old one is renamed back; if the process dies between
    the two, ``load`` says where the old model is. Where another save put its model in between the two renames,
    the old one set aside is superseded by that one and deleted, and the swap starts again.
    """
    if not os.path.lexists(folder):
        try:
            rename(temp, folder)
        except OSError as error:
            if _taken(error):
                return False
            raise
        fsync_dir(folder.parent)
        return True
    aside = new_sibling(folder, "old", create=False)
    try:
        rename(folder, aside)
    except FileNotFoundError:  # another save set it aside first
        return False
    try:
        rename(temp, folder)
    except OSError as error:
        if _taken(error):
            _discard(aside)
            return False
        rename(aside, folder)
        raise
    except BaseException:
        rename(aside, folder)
        raise
    fsync_dir(folder.parent)
    _discard(aside)
    return True


def _swap_in(temp: Path, folder: Path) -> None:
    """Put the complete model in ``temp`` at ``folder`` (``_swap_once``), again while other saves to it move it.

    Raises:
        FileExistsError: other saves replaced ``folder`` ``SAVE_ATTEMPTS`` times in a row.
    """
    for attempt in range(SAVE_ATTEMPTS):
        if _swap_once(temp, folder):
            return
        time.sleep(min(0.001 * 2**attempt, 0.05))
    raise FileExistsError(
        f"Could not save to {str(folder)!r}: other saves to it replaced it {SAVE_ATTEMPTS} times while this one was "
        "putting its model in place. Save again, or save each process's model to its own folder."
    )


def save_model(model, path) -> None:
    """Write a fitted :class:`Seq2SeqForecaster` to directory ``path``, atomically.

    ``path`` may not exist, or be a directory holding a model only (it is replaced), or a symlink (the link
    is replaced; what it points to is left alone).

    Raises:
        FileExistsError: ``path`` is a file, or a directory that holds other files.
        TypeError: a parameter or a history value that a model file cannot hold (nothing is written).
    """
    folder = Path(os.path.abspath(os.fspath(path)))
    files = encode_model(model)
    _check_target(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    temp = new_sibling(folder, "saving", create=True)
    try:
        for name in (WEIGHTS, HISTORY, CONFIG, MANIFEST):  # the manifest last: its presence marks a complete save
            write_file(temp / name, files[name])
        fsync_dir(temp)
        _swap_in(temp, folder)
    except BaseException:
        if os.path.lexists(temp):
            shutil.rmtree(temp, ignore_errors=True)
        raise


# ---------------------------------------------------------------------------- load
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
    with open(path, "rb") as handle:
        data = handle.read() if limit is None else handle.read(limit + 1)
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


def _read_consistent(folder: Path) -> tuple[dict[str, Any], dict[str, bytes]]:
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


def load_model(cls, path):
    """Rebuild a fitted estimator of class ``cls`` from ``path`` (see :func:`save_model`).

    Raises:
        ModelFileError: a file is missing, does not match its checksum, or breaks the schema (the message names it).
    """
    built = []

    def complete(given: dict[str, Any]) -> dict[str, Any]:
        built.append(estimator_from_params(cls, given))
        return built[-1].get_params()

    _, state, network = _read_model(path, complete)
    return built[-1].set_fitted(state, network, "cpu", [])


def read_fitted(path) -> tuple[dict[str, Any], FittedState, Ensemble]:
    """The parameters, fitted state and network of a model file, without an estimator (the shipped priors are read
    this way); the parameters are those ``load_model`` would give the estimator.

    Raises:
        ModelFileError: as :func:`load_model`.
    """
    return _read_model(path, complete_params)


def _read_model(path, complete) -> tuple[dict[str, Any], FittedState, Ensemble]:
    folder = Path(path)
    config, files = _read_consistent(folder)
    try:
        return _read(config, files, complete)
    except Invalid as error:
        raise ModelFileError(f"Model directory {str(folder)!r}: {error}") from None


def _read(config: dict[str, Any], files: dict[str, bytes], complete) -> tuple[dict[str, Any], FittedState, Ensemble]:
    """The file's parameters (``complete`` fills and checks them), its fitted state and its network."""
    version = config["format_version"]
    config_schema(version)(config, "")
    fitted = config["fitted"]
    check_bounds(fitted)
    params = complete(config["params"])
    try:
        offset = normalise_freq(fitted["freq"])
    except ValueError as error:
        raise Invalid(f"`fitted.freq` in {CONFIG}: {error}") from None
    history = read_history(files[HISTORY], fitted, version)
    upgraded = upgraded_state(fitted, params, offset)  # the fields its version did not write, as its model used them
    try:
        state = FittedState.from_dict(upgraded, history, params["id_col"])
    except (TypeError, ValueError, KeyError) as error:
        raise Invalid(f"`fitted` in {CONFIG} could not be read: {error}") from None
    check_agreement(state, params)
    if len(history):  # the stored history is checked as any input is: predict() forecasts from it
        try:
            clean_history(history, Columns.from_params(params), state.roles)
        except (TypeError, ValueError) as error:
            raise Invalid(f"The history in {HISTORY} is not valid input: {error}") from None
    return params, state, read_network(files[WEIGHTS], state.network, state.n_members)
