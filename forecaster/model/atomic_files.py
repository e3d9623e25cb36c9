"""File-system steps of an atomic save: create files without following symlinks, fsync, rename, pick hidden names.

``persistence.save_model`` composes them; each is a separate function so that a test can make one step fail.
"""

from __future__ import annotations

import os
import secrets
import shutil
from pathlib import Path


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
