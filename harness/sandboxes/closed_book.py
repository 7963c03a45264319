"""`--closed-book`: every sandbox gets an empty `/workspace/documents`, everything else as in a normal run
(the backend's wrapper is `backend_setup.ClosedBookBackend`).

The local and Docker backends mount a folder: each episode is given an empty one of its own (read-only, so the
sandbox user can list it and nobody can fill it), removed when its sandbox closes, so no two episodes share
even an empty folder (a lock or a watch on a shared one was a channel between them). E2B bakes the documents
into its template, so a closed-book run uses the template built from no documents (`sandbox build e2b
--closed-book`), in a VM per episode.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from harness.sandboxes.base import ExecResult, Sandbox

CLOSED_BOOK_TEMPLATE = "closed-book"
"""The name E2B's empty-documents template is built under, in place of a domain's."""


def empty_documents() -> Path:
    """A new empty folder (mode 0555, in a 0555 parent of its own); `remove_empty_documents` removes it."""
    path = Path(tempfile.mkdtemp(prefix="harness-closed-book-")) / "documents"
    path.mkdir()
    path.chmod(0o555)
    path.parent.chmod(0o555)
    return path


def remove_empty_documents(path: Path) -> None:
    for folder in (path.parent, path):
        if folder.exists():
            os.chmod(folder, 0o755)
    shutil.rmtree(path.parent, ignore_errors=True)


class ClosedBookSandbox:
    """A sandbox over an empty folder of its own, which goes when the sandbox closes."""

    def __init__(self, inner: Sandbox, documents: Path):
        self._inner = inner
        self._documents = documents

    def start(self) -> None:
        self._inner.start()

    def execute(self, command: str, timeout_s: float) -> ExecResult:
        return self._inner.execute(command, timeout_s)

    def describe(self) -> dict[str, object]:
        return self._inner.describe()

    def close(self) -> None:
        try:
            self._inner.close()
        finally:
            remove_empty_documents(self._documents)
