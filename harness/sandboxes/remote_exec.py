"""The exec loop Docker and E2B share: one command at a time, drained on a thread, cancellable.

Each backend supplies only its primitives: start the command (E2B: a root `harness-exec` process; Docker:
a request to the episode's `harness-execd`), wait for it (feeding its output), and kill every process of
the sandbox user. On both, what runs the command is root, out of the agent's reach, and has killed the
command's processes before it answers (E2B: with the command's own pid namespace); the kill after every
command is a second line that costs one round trip.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from harness.sandboxes.base import ExecResult, SandboxError, SandboxSettings
from harness.sandboxes.output import HeadTail, capped_result, harness_exec_timed_out

LABEL_RUN, LABEL_EPISODE, LABEL_OWNER = "harness.run", "harness.episode", "harness.owner"
LABEL_INVOCATION = "harness.invocation"
"""One start of a run (`python -m harness ...` once, on every node of its cluster): shards of one run id on
several machines each have their own, so a sweep by invocation never touches another's live sandboxes."""
AGENT = "agent"
"""The unprivileged user commands run as in the recipe image and template."""
AGENT_UID = 2000
"""The recipe's `useradd --uid`: not 1000, which E2B's build gives its own default user `user` before our
steps (e2b-dev/infra template build, `useradd -m -s /bin/bash user`), so 1000 would fail the build."""
AGENT_HOME = "/tmp"
GRACE_S = 30.0
"""How long past its limit a command may take before the sandbox counts as broken."""
_CANCEL_WAIT_S = 10.0
"""How long a cancelled command's output is still drained after the kill."""
POLL_S = 0.2
KILL_AGENT_PROCESSES = ("kill", "-KILL", "-1")
"""Run as the agent: signals every process of the agent but itself (never root's, e.g. E2B's envd)."""


def owner_label() -> str:
    """`host:pid` of this runner, so a later cleanup can tell orphans of dead runs from live ones."""
    return f"{socket.gethostname()}:{os.getpid()}"


def owner_is_dead(owner: str) -> bool:
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False  # another machine's run: not ours to judge
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


class RemoteCommand(Protocol):
    def wait(self, stdout: HeadTail, stderr: HeadTail) -> int | None:
        """Feed the command's output until it ends; its exit code. Raises when the sandbox fails."""

    def kill(self) -> None:
        """Stop the command now (the run is cancelled); raises only `SandboxError`."""


def run_remote(
    start: Callable[[float], RemoteCommand],
    kill_agent_processes: Callable[[], None],
    timeout_s: float,
    settings: SandboxSettings,
    cancel: threading.Event,
) -> ExecResult:
    """Run one command through `start(limit_s)` and return its capped result."""
    limit = max(timeout_s, 0.01)
    stdout, stderr = HeadTail(settings.output_limit_bytes), HeadTail(settings.output_limit_bytes)
    started = time.monotonic()
    command = start(limit)
    outcome: dict[str, Any] = {}
    reader = threading.Thread(target=_wait, args=(command, stdout, stderr, outcome), daemon=True)
    reader.start()
    while reader.is_alive():
        if cancel.is_set():
            with contextlib.suppress(SandboxError):
                command.kill()
            reader.join(_CANCEL_WAIT_S)
            break
        if time.monotonic() - started > limit + GRACE_S:
            with contextlib.suppress(SandboxError):
                command.kill()
            raise SandboxError("the sandbox did not stop the command in time")
        reader.join(POLL_S)
    duration = time.monotonic() - started
    if cancel.is_set():
        with contextlib.suppress(SandboxError):  # the episode ends as cancelled; its sandbox is removed anyway
            kill_agent_processes()
        return capped_result(stdout, stderr, None, False, duration)
    if "error" in outcome:
        raise SandboxError(f"command failed: {outcome['error']}")
    kill_agent_processes()
    code = outcome["exit_code"]
    return capped_result(stdout, stderr, code, harness_exec_timed_out(code, duration, limit), duration)


def _wait(command: RemoteCommand, stdout: HeadTail, stderr: HeadTail, outcome: dict[str, Any]) -> None:
    try:
        outcome["exit_code"] = command.wait(stdout, stderr)
    except Exception as error:  # lost connections, SDK timeouts: the sandbox failed, not the command
        outcome["error"] = f"{type(error).__name__}: {error}"
