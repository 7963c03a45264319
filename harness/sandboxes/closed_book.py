"""`--closed-book`: every sandbox gets an empty `/workspace/documents`, everything else as in a normal run
(the backend's wrapper is `registry.ClosedBookBackend`).

The local and Docker backends mount a folder: they are given an empty one (made once per process, read-only,
so the sandbox user can list it and nobody can fill it). E2B bakes the documents into its template, so a
closed-book run uses the template built from no documents (`sandbox build e2b --closed-book`).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
from pathlib import Path

CLOSED_BOOK_TEMPLATE = "closed-book"
"""The name E2B's empty-documents template is built under, in place of a domain's."""
_lock = threading.Lock()
_empty: list[Path] = []


def empty_documents() -> Path:
    """An empty folder, made once per process (mode 0555) and removed when it exits."""
    with _lock:
        if not _empty:
            path = Path(tempfile.mkdtemp(prefix="harness-closed-book-")) / "documents"
            path.mkdir()
            path.chmod(0o555)
            path.parent.chmod(0o555)
            atexit.register(_remove, path.parent)
            _empty.append(path)
        return _empty[0]


def _remove(folder: Path) -> None:
    for path in (folder, folder / "documents"):
        if path.exists():
            os.chmod(path, 0o755)
    shutil.rmtree(folder, ignore_errors=True)
