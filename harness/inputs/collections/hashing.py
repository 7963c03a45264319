"""Content hashes: one file, and a whole collection (the hash `run.yaml` records).

A collection's hash is sha256 over each file's relative path and its own sha256, in name order
(`sha256-tree:`), so it follows from per-file hashes: those are kept in the user's cache per collection
folder, keyed by each file's (size, mtime, ctime, inode), and only new or changed files are read again. A
start on an unchanged 1.5 GB collection then costs a walk and a stat per file, not 1.5 GB of sha256; on a
Ray node the first worker hashes (under a lock) and the others read what it kept. Many megabytes are hashed
in a Python process of their own: in this one they would contend for the GIL with the model library's import,
which runs meanwhile, and each would take twice as long.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from harness.core.errors import InputError

_BLOCK = 1 << 20
_IN_PROCESS_BYTES = 64 << 20
"""Up to this much is hashed here (about 50 ms); more in a process of its own (which takes about 20 ms to start)."""
_HASHER = f"""
import concurrent.futures, hashlib, os, sys
root, workers = os.fsencode(sys.argv[1]), int(sys.argv[2])
names = [name for name in sys.stdin.buffer.read().split(b"\\0") if name]
def sha256(name):
    digest = hashlib.sha256()
    try:
        with open(os.path.join(root, name), "rb") as handle:
            for block in iter(lambda: handle.read({_BLOCK}), b""):
                digest.update(block)
    except OSError as error:
        return "!" + (error.strerror or type(error).__name__)
    return digest.hexdigest()
with concurrent.futures.ThreadPoolExecutor(workers) as pool:
    sys.stdout.write("".join(line + "\\n" for line in pool.map(sha256, names)))
"""
"""Each name's sha256, a line each in order ("!" and the error for a file it could not read); stdlib only."""
_CACHE_VERSION = 1
_TREE = "sha256-tree:"
_LEGACY = "sha256:"
"""The whole-content hash of runs written before `sha256-tree` (a resume of one compares with it)."""


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class CollectionFiles:
    """A collection's files, in name order, each with its content's sha256."""

    root: Path
    files: dict[str, str]
    """Relative path -> sha256 (hex)."""

    @property
    def digest(self) -> str:
        tree = hashlib.sha256()
        for relative, sha in self.files.items():
            tree.update(relative.encode() + b"\0" + sha.encode() + b"\0")
        return _TREE + tree.hexdigest()


def collection_files(root: Path, cache_dir: Path | None = None) -> CollectionFiles:
    """Every file of ROOT with its hash; with CACHE_DIR, unchanged files' hashes come from there."""
    listed = listed_names(root)
    if cache_dir is None:
        sizes = sum((root / relative).stat().st_size for relative in listed)
        return CollectionFiles(root, dict(zip(listed, _hashed(root, listed, sizes), strict=True)))
    cache = cache_dir / "collections" / f"{hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:32]}.json"
    with _locked(cache):
        kept = _read_cache(cache)
        stats = {relative: _identity(root / relative) for relative in listed}
        stale = [relative for relative in listed if relative not in kept or kept[relative][0] != stats[relative]]
        stale_bytes = sum(stats[relative][0] for relative in stale)
        fresh = dict(zip(stale, _hashed(root, stale, stale_bytes), strict=True))
        files = {relative: fresh[relative] if relative in fresh else kept[relative][1] for relative in listed}
        if stale or len(kept) != len(listed):
            _write_cache(cache, {relative: [*stats[relative], files[relative]] for relative in listed})
    return CollectionFiles(root, files)


def collection_hash(root: Path, cache_dir: Path | None = None) -> str:
    return collection_files(root, cache_dir).digest


def legacy_collection_hash(path: Path) -> str:
    """The `sha256:` hash: over every file's relative path and content streamed together, in name order."""
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        digest.update(str(file.relative_to(path)).encode() + b"\0")
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(_BLOCK), b""):
                digest.update(block)
        digest.update(b"\0")
    return _LEGACY + digest.hexdigest()


def same_collection(recorded: str, files: CollectionFiles) -> bool:
    """Whether a recorded hash (either scheme) is the hash of these files."""
    if recorded.startswith(_LEGACY):
        return legacy_collection_hash(files.root) == recorded
    return files.digest == recorded


def listed_names(root: Path) -> list[str]:
    """Relative names of the files under ROOT in the order the hash takes them (sorted as paths)."""
    names = []
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = str(file.relative_to(root))
        try:
            relative.encode()
        except UnicodeEncodeError:
            raise InputError(f"{root}: file name {relative!r} is not UTF-8; rename it") from None
        names.append(relative)
    return names


def _hashed(root: Path, names: list[str], size: int) -> list[str]:
    """sha256 of each file (SIZE bytes in all), in threads (hashlib lets go of the GIL over large reads), leaving
    one core to the model library's import that runs meanwhile (harness/run/planning/model_factory.py)."""
    workers = max(1, min(4, (os.cpu_count() or 1) - 1))
    if size <= _IN_PROCESS_BYTES:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(lambda name: file_sha256(root / name), names))
    hasher = subprocess.run(
        [sys.executable, "-I", "-S", "-c", _HASHER, str(root), str(workers)],
        input=b"\0".join(os.fsencode(name) for name in names),
        capture_output=True,
        check=True,
    )
    digests = hasher.stdout.decode().splitlines()
    for name, digest in zip(names, digests, strict=True):
        if digest.startswith("!"):
            raise OSError(f"{root / name}: {digest[1:]}")
    return digests


def _identity(path: Path) -> list[int]:
    """What changes when a file's content may have: size, mtime, ctime (which no one can set) and inode."""
    stat = path.stat()
    return [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino]


def _read_cache(path: Path) -> dict[str, tuple[list[int], str]]:
    """Relative path -> (identity, sha256) as last hashed; empty when missing, unreadable or of another version."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("version") != _CACHE_VERSION:
            return {}
        return {str(name): ([int(n) for n in entry[:-1]], str(entry[-1])) for name, entry in data["files"].items()}
    except (OSError, ValueError, TypeError, KeyError, AttributeError, IndexError):
        return {}


def _write_cache(path: Path, entries: dict[str, list[int | str]]) -> None:
    with contextlib.suppress(OSError):  # a cache we cannot write only costs the next start the hashing
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(json.dumps({"version": _CACHE_VERSION, "files": entries}), encoding="utf-8")
        partial.replace(path)


@contextlib.contextmanager
def _locked(cache: Path) -> Iterator[None]:
    """One hasher per collection at a time (a Ray node's workers, two runs): the others wait, then read it."""
    try:
        cache.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        handle = open(cache.with_suffix(".lock"), "a")  # noqa: SIM115 - held for the block below
    except OSError:
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
