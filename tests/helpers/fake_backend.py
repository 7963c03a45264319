"""A sandbox backend for tests only: each command runs with subprocess in a temporary folder of the host
(documents/ a link to the collection, run/ a scratch folder). It isolates nothing: never use it for real runs.
It shows what a new backend is: this module and one registry line."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, ClassVar

from harness.sandboxes.backend import BackendSetup, SandboxBackend
from harness.sandboxes.base import ExecResult, Sandbox, SandboxError, SandboxSettings, sandbox_environment
from harness.sandboxes.file_read import file_bytes, read_command
from harness.sandboxes.output import HeadTail, capped_result
from harness.sandboxes.tools import host_aliases


class FakeSandbox:
    def __init__(self, collection: Path, settings: SandboxSettings, made: list[str], name: str):
        self._collection, self._settings, self._made, self._name = collection, settings, made, name
        self._root: Path | None = None

    def start(self) -> None:
        self._root = Path(tempfile.mkdtemp(prefix="harness-fake-"))
        (self._root / "documents").symlink_to(self._collection)
        (self._root / "run").mkdir()
        aliases = self._root / "bin"
        aliases.mkdir()
        for command, program in host_aliases().items():  # Debian's fdfind as fd, as the local sandbox does
            (aliases / command).symlink_to(program)
        self._made.append(self._name)

    def execute(self, command: str, timeout_s: float) -> ExecResult:
        if self._root is None:
            raise SandboxError("the fake sandbox was not started")
        environment = sandbox_environment(f"{self._root / 'bin'}:{os.environ['PATH']}")
        started = time.monotonic()
        try:
            done = subprocess.run(
                ["bash", "-c", command], cwd=self._root, env=environment, capture_output=True, timeout=timeout_s
            )
        except subprocess.TimeoutExpired as expired:
            stdout, stderr = expired.stdout or b"", expired.stderr or b""
            code, timed_out = None, True
        else:
            stdout, stderr, code, timed_out = done.stdout, done.stderr, done.returncode, False
        out, err = HeadTail(self._settings.output_limit_bytes), HeadTail(self._settings.output_limit_bytes)
        out.feed(stdout)
        err.feed(stderr)
        return capped_result(out, err, code, timed_out, time.monotonic() - started)

    def close(self) -> None:
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)

    def read_bytes(self, path: str, max_bytes: int, timeout_s: float) -> bytes:
        """Read as every backend reads: by a command inside the sandbox (sandboxes/file_read.py)."""
        return file_bytes(self.execute(read_command(path, max_bytes), timeout_s), path, max_bytes)

    def describe(self) -> dict[str, object]:
        return {"backend": "fake"}


class FakeBackend(SandboxBackend):
    name = "fake"
    made: ClassVar[list[str]] = []
    """Every sandbox started, by episode name, in this process (the tests read it)."""

    def __init__(self, settings: SandboxSettings):
        self.settings = settings

    @classmethod
    def check(cls, setup: BackendSetup) -> FakeBackend:
        return cls(setup.settings)

    @property
    def facts(self) -> dict[str, Any]:
        return {"backend": "fake", "limits": {"mechanism": "none (a test backend)"}}

    def new_sandbox(self, domain: str, collection: Path, episode_name: str, cancel: threading.Event) -> Sandbox:
        return FakeSandbox(collection, self.settings, self.made, episode_name)
