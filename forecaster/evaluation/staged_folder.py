"""Output folders written whole or not at all: a report, the plots of ``forecaster explain``.

Files are written into a temporary folder beside (or, for an existing folder, inside) the target and moved in only
once every one is complete. A new folder appears in one step. Into an existing one, the previous files of the same
names are moved aside first and put back if anything fails, so the folder holds one set or the other, never a mix;
files of the user's beside them are left alone.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path


@contextlib.contextmanager
def staged_folder(folder: Path, managed: Iterable[str] = ()) -> Iterator[Path]:
    """Yield a temporary folder to write into; on success its files replace those of ``folder`` (created with its
    parents where missing), and files named in ``managed`` that were not written again are removed. On failure
    (an exception or an interrupt) ``folder`` is left as it was, and a folder this call created is removed again.

    Raises:
        NotADirectoryError: ``folder`` is a file.
    """
    target = Path(folder).resolve()
    if target.exists() and not target.is_dir():
        raise NotADirectoryError(f"Cannot write into {folder}: it is a file.")
    created = [p for p in (target.parent, *target.parent.parents) if not p.exists()]  # deepest first
    target.parent.mkdir(parents=True, exist_ok=True)
    beside = target if target.exists() else target.parent  # on the target's file system (a mount, a read-only parent)
    staging = beside / f".{target.name}.partial-{secrets.token_hex(4)}"
    staging.mkdir()
    try:
        yield staging
        if not target.exists():
            staging.rename(target)  # a new folder appears whole, in one step
        else:
            _swap_files(staging, target, sorted(p.name for p in staging.iterdir()), managed)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        for parent in created:
            try:
                parent.rmdir()
            except OSError:
                break
        raise


def _swap_files(staging: Path, target: Path, names: list[str], managed: Iterable[str]) -> None:
    """Move ``names`` from ``staging`` into ``target``, the previous files of those names and of ``managed`` out of
    the way first (into ``staging/.previous``); an interruption puts every previous file back."""
    previous = staging / ".previous"
    previous.mkdir()
    moved: list[str] = []
    try:
        for name in sorted(set(managed) | set(names)):
            if (target / name).exists():
                os.replace(target / name, previous / name)
                moved.append(name)
        for name in names:
            os.replace(staging / name, target / name)
    except BaseException:
        for name in names:
            if not (staging / name).exists():  # moved in already: take it out again
                (target / name).unlink(missing_ok=True)
        for name in moved:
            os.replace(previous / name, target / name)
        raise
    shutil.rmtree(staging)
