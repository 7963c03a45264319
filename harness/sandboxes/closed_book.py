"""`--closed-book`: every sandbox gets an empty `/workspace/documents`, everything else as in a normal run
(the backend's wrapper is `ClosedBookBackend`).

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
import threading
from pathlib import Path
from typing import Any

from harness.sandboxes.backend import Capabilities, Killer, SandboxBackend
from harness.sandboxes.base import ExecResult, Sandbox
from harness.sandboxes.pacing import Pacer

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


class _ClosedBookSandbox:
    """A sandbox over an empty folder of its own, which goes when the sandbox closes."""

    def __init__(self, inner: Sandbox, documents: Path):
        self._inner = inner
        self._documents = documents

    def start(self) -> None:
        self._inner.start()

    def execute(self, command: str, timeout_s: float) -> ExecResult:
        return self._inner.execute(command, timeout_s)

    def read_bytes(self, path: str, max_bytes: int, timeout_s: float) -> bytes:
        return self._inner.read_bytes(path, max_bytes, timeout_s)

    def describe(self) -> dict[str, object]:
        return self._inner.describe()

    def close(self) -> None:
        try:
            self._inner.close()
        finally:
            remove_empty_documents(self._documents)


class ClosedBookBackend(SandboxBackend):
    """A backend whose sandboxes mount an empty folder where the domain's collection would be (local, Docker)."""

    def __init__(self, inner: SandboxBackend):
        self.inner = inner

    @property
    def facts(self) -> dict[str, Any]:
        return self.inner.facts | {"documents": "empty (--closed-book)"}

    @property
    def capabilities(self) -> Capabilities:
        return self.inner.capabilities

    def probe_identity(self, domain: str) -> str | None:
        return self.inner.probe_identity(domain)

    def start(self, probe: bool = True) -> None:
        self.inner.start(probe)
        self.tool_probe = self.inner.tool_probe  # the empty folder changes no tool: no sandbox of its own

    def new_sandbox(self, domain: str, collection: Path, episode_name: str, cancel: threading.Event) -> Sandbox:
        documents = empty_documents()
        return _ClosedBookSandbox(self.inner.new_sandbox(domain, documents, episode_name, cancel), documents)

    def leftovers(self) -> Killer | None:
        return self.inner.leftovers()

    @property
    def creations_per_s(self) -> float | None:
        return self.inner.creations_per_s

    def paced_by(self, pacer: Pacer) -> SandboxBackend:
        return ClosedBookBackend(self.inner.paced_by(pacer))
