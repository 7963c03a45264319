"""Sandboxes by name. A sandbox runs one bash command at a time for one episode."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


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


class SandboxError(RuntimeError):
    """The sandbox itself failed (not the command): the episode ends as `sandbox_error`."""


class Sandbox(Protocol):
    def start(self) -> None:
        """Create the episode's fresh environment."""

    def execute(self, command: str, timeout_s: float) -> ExecResult:
        """Run `bash -c command` in a fresh process; kill its whole process tree after `timeout_s`."""

    def close(self) -> None:
        """Remove everything the episode created. Safe to call twice."""

    def describe(self) -> dict[str, object]:
        """Backend facts for run.yaml and the trajectory (backend, limits mechanism, ...)."""
