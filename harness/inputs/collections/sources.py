"""The files of a source folder a build may read. Archives restore links (tar, unzip), so a folder from anyone
can hold `environ.txt -> /proc/self/environ` or `gold.txt -> ../tasks/law.jsonl`: only regular files are read,
and a link only when it resolves to a regular file inside the folder (read as that target, resolved once).
Everything else is refused with its reason: links out of the folder, broken links, links to folders (never
followed), and special files (a FIFO would hang the build, a device never ends). Hidden files and folders
are ignored. A name that is not UTF-8 is shown as read in a Western European code page (`readable_name`),
unless another name in the folder reads the same (a UTF-8 `café.txt` beside a Latin-1 `caf\\xe9.txt`): then it is
shown with its bytes escaped (`caf\\xe9.txt`), with a note, so the two stay two documents."""

from __future__ import annotations

import os
import stat
from collections import Counter
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from harness.inputs.collections.manifest import Skipped

_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a folder"),
)


@dataclass(frozen=True)
class SourceFile:
    relative: PurePosixPath
    """Its name in the source folder (a link's own name)."""
    path: Path
    """The regular file to read: itself, or a link's resolved target."""
    note: str | None = None
    """Why its name is shown as it is, when that is not plain (`_shown_names`)."""


def source_files(folder: Path, links_into: tuple[Path, ...] = ()) -> tuple[list[SourceFile], list[Skipped]]:
    """FOLDER's readable files and its refused entries, both sorted by name. A link may resolve inside FOLDER
    or inside one of LINKS_INTO (folders the caller chose, e.g. the PDFs a staging folder links to)."""
    allowed = (folder.resolve(), *(path.resolve() for path in links_into))
    found: list[tuple[bytes, Path | None, str]] = []  # (name's bytes, the file to read or None, why not)
    for directory, folders, names in os.walk(folder):
        here = Path(directory)
        folders[:] = sorted(name for name in folders if not name.startswith("."))
        for name in folders:
            if (here / name).is_symlink():  # os.walk lists a link to a folder here and does not descend
                found.append((_raw(folder, here / name), None, "a link to a folder (links are not followed)"))
        for name in sorted(name for name in names if not name.startswith(".")):
            found.append((_raw(folder, here / name), *_readable(here / name, allowed)))
    shown = _shown_names([raw for raw, _, _ in found])
    readable, refused = [], []
    for raw, target, reason in found:
        name, note = shown[raw]
        if target is None:
            refused.append(Skipped(name, reason))
        else:
            readable.append(SourceFile(PurePosixPath(name), target, note))
    return sorted(readable, key=lambda f: f.relative), sorted(refused, key=lambda s: s.source)


def _readable(path: Path, allowed: tuple[Path, ...]) -> tuple[Path | None, str]:
    """The regular file to read for PATH, else None and why it is refused. Nothing is opened."""
    try:
        mode = path.lstat().st_mode
        if not stat.S_ISLNK(mode):
            return (path, "") if stat.S_ISREG(mode) else (None, f"not a regular file ({_kind(mode)})")
        target = path.resolve(strict=True)
        mode = target.stat().st_mode
    except (OSError, RuntimeError):  # RuntimeError: a loop of links (before Python 3.13)
        return None, "a broken link"
    if not any(target.is_relative_to(root) for root in allowed):
        return None, f"a link out of the source folder (to {target})"
    if not stat.S_ISREG(mode):
        return None, f"a link to {_kind(mode)}"
    return target, ""


def _kind(mode: int) -> str:
    return next((kind for test, kind in _KINDS if test(mode)), "a special file")


def _raw(folder: Path, path: Path) -> bytes:
    return os.fsencode(path.relative_to(folder).as_posix())


def _shown_names(raws: list[bytes]) -> dict[bytes, tuple[str, str | None]]:
    """Each name as shown, and a note when it is shown escaped: its bytes are not UTF-8 and their reading is
    another name's too."""
    readings = Counter(readable_name(raw) for raw in raws)
    shown: dict[bytes, tuple[str, str | None]] = {}
    for raw in raws:
        reading = readable_name(raw)
        if readings[reading] > 1 and not _is_utf8(raw):
            note = f"its name is not UTF-8 and reads {reading!r}, as another file's does: shown with its bytes escaped"
            shown[raw] = (raw.decode("utf-8", "backslashreplace"), note)
        else:
            shown[raw] = (reading, None)
    return shown


def _is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def readable_name(name: str | bytes) -> str:
    """A file name as text: its bytes read as UTF-8, else as cp1252 (a Latin-1 `caf\\xe9` from an old archive
    reads `café`, not `caf\\udce9`), else as Latin-1 (every byte is a character)."""
    raw = name if isinstance(name, bytes) else os.fsencode(name)
    for encoding in ("utf-8", "cp1252"):
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            continue
    return raw.decode("latin-1")
