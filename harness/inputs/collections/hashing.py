"""Content hashes: one source or output file, and a whole collection (the hash `run.yaml` records)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from harness.core.errors import InputError

_BLOCK = 1 << 20


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def collection_hash(path: Path) -> str:
    """sha256 over every file's relative path and content, in name order."""
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        relative = str(file.relative_to(path))
        try:
            digest.update(relative.encode() + b"\0")
        except UnicodeEncodeError:
            raise InputError(f"{path}: file name {relative!r} is not UTF-8; rename it") from None
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(_BLOCK), b""):
                digest.update(block)
        digest.update(b"\0")
    return "sha256:" + digest.hexdigest()
