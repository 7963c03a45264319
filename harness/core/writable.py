"""Whether a folder can be made and written, asked before anything is written: a results or output folder
that is a file, under a file, read-only or not ours is bad input in one line, not an OSError half-way."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from harness.core.errors import InputError


def check_writable_folder(path: Path, flag: str) -> None:
    """Raise `InputError` ('--out PATH: cannot be written: ...') unless PATH is a folder we may write in, or
    could be made in the nearest folder above it that exists."""
    existing = next(folder for folder in (path, *path.parents) if folder.exists() or folder == folder.parent)
    why = _unwritable(existing, path)
    if why is not None:
        raise InputError(f"{flag} {path}: cannot be written: {why}")


def _unwritable(existing: Path, path: Path) -> str | None:
    if not existing.is_dir():
        return "it is a file, not a folder" if existing == path else f"{existing} is a file, not a folder"
    if os.statvfs(existing).f_flag & os.ST_RDONLY:
        return f"{existing} is on a read-only file system"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"no permission to write in {existing}"
    return _refused_folder(existing)


def _refused_folder(existing: Path) -> str | None:
    """What making a folder in EXISTING meets, tried (and removed at once): root's permission bits say yes to
    folders a file system refuses anyway (/sys, /proc)."""
    try:
        probe = tempfile.mkdtemp(prefix=".harness-writable-", dir=existing)
    except OSError as error:
        return f"{existing} refuses new folders ({error.strerror or error})"
    os.rmdir(probe)
    return None
