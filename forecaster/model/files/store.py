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

``load`` reads each file once and refuses it unless it matches the manifest (``reading``), fills in what an older
file's version did not record (``migration``), then validates the config against its schema (``schema``) and the
parts against each other and against the shapes of the weights (``agreement``) before allocating the network. Every
refusal is a :class:`ModelFileError` that names the file or the key at fault. Format-1 files (no manifest;
``config.json`` records the checksums of the two binary files) still load and forecast as they did.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import time
import warnings
from pathlib import Path
from typing import Any

from ...callers import user_stacklevel
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
    MODEL_FILES,
    WEIGHTS,
    Invalid,
    ModelFileError,
    show,
)
from .migration import upgraded_state
from .reading import read_consistent
from .schema import config_schema


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
            f"The model was saved, but its previous version in {str(aside)!r} could not be removed: {error}",
            stacklevel=user_stacklevel(),
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
    config, files = read_consistent(folder)
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
