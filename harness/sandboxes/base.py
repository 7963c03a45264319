"""What a sandbox is: the `Sandbox` protocol, its settings, a command's result, the sandbox errors and the
environment allow-list. A sandbox runs one bash command at a time for one episode."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Protocol

from harness.core.status import EpisodeFailure, Status
from harness.sandboxes.limits import ResourceLimits

_SANDBOX_ENV = {
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "TERM": "dumb",
    "PYTHONDONTWRITEBYTECODE": "1",
    "MPLBACKEND": "Agg",
    "PAGER": "cat",
}
"""The whole environment a command sees, besides PATH: host variables (API keys) never enter."""
_HOST_ENV_ALLOWED = ("TZ",)
IMAGE_PATH = "/opt/sandbox/bin:/usr/local/bin:/usr/bin:/bin"
"""PATH inside the Docker image and E2B template (sandbox_templates/Dockerfile)."""
WORKDIR = "/workspace"
"""Every backend's working directory: the collection is `documents/` in it, the scratch space `run/`."""
DOCUMENTS = f"{WORKDIR}/documents"
"""Where every backend mounts the collection, read-only."""
TIMEOUT_EXIT_CODE = 124
"""The status `harness-exec` and `harness-execd` (in the image) give a command killed at its time limit."""


def sandbox_environment(path: str) -> dict[str, str]:
    environment = {"PATH": path, **_SANDBOX_ENV}
    return environment | {name: os.environ[name] for name in _HOST_ENV_ALLOWED if name in os.environ}


@dataclass(frozen=True)
class SandboxSettings:
    """What every backend enforces the same way."""

    limits: ResourceLimits = field(default_factory=ResourceLimits)
    output_limit_bytes: int = 20_000
    """Output kept per stream for the model (head and tail halves); the raw size is always logged."""


@dataclass(frozen=True)
class ExecResult:
    """What one command did, with its output already capped for the model."""

    stdout: str
    stderr: str
    exit_code: int | None
    """None when the command was killed on timeout."""
    timed_out: bool
    truncated: bool
    raw_bytes: int
    """Size of stdout plus stderr before capping."""
    duration_s: float


class SandboxError(EpisodeFailure, RuntimeError):
    """The sandbox itself failed (not the command): the episode ends as `sandbox_error`."""

    status = Status.SANDBOX_ERROR


class SandboxLimitHit(SandboxError):
    """The agent's own usage (memory, disk, processes) brought the sandbox down: the episode ends as
    `sandbox_limit`, the agent's outcome like a turn or time limit, and a resume does not run it again."""

    status = Status.SANDBOX_LIMIT

    def __init__(self, limit: str, detail: str):
        super().__init__(f"the sandbox's {limit} limit was hit: {detail}")
        self.limit = limit


class Sandbox(Protocol):
    def start(self) -> None:
        """Create the episode's fresh environment."""

    def execute(self, command: str, timeout_s: float) -> ExecResult:
        """Run `bash -c command` in a fresh process; kill its whole process tree after `timeout_s`."""

    def read_bytes(self, path: str, max_bytes: int, timeout_s: float) -> bytes:
        """The regular file PATH (as the sandbox sees it, relative to its working directory) of at most MAX_BYTES,
        read by a command inside it (sandboxes/file_read.py); `FileUnreadable` for the agent's error,
        `SandboxError` for the sandbox's."""

    def close(self) -> None:
        """Remove everything the episode created. Safe to call twice."""

    def describe(self) -> dict[str, object]:
        """Backend facts for run.yaml and the trajectory (backend, limits mechanism, ...)."""
