"""One command through the episode's launcher (see `holder.py`): request, output, exit, kill.

The runner thread that runs the command does all the waiting itself in one `poll` over the launcher's
answers and the output pipes, so a command costs no thread and no sleep: it returns as soon as the
launcher reports the exit.
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import signal
import threading
import time
from dataclasses import dataclass

from harness.sandboxes.base import SandboxError
from harness.sandboxes.local.holder import Scratch, pid_namespace
from harness.sandboxes.output import HeadTail

_TICK_S = 0.2
"""How often a running command notices the runner's cancel event."""
_KILL_WAIT_S = 10.0
"""How long a killed command's bwrap may take to be reported gone."""
_CHUNK = 65536


@dataclass
class Finished:
    """What the launcher reports for one command."""

    stdout: HeadTail
    stderr: HeadTail
    returncode: int | None
    """bwrap's exit status (128+N when killed by signal N); None when the command was killed."""
    timed_out: bool
    started: bool
    """bwrap set the sandbox up (its status said `child-pid`)."""


class Launch:
    """Runs commands through one scratch's launcher, one at a time."""

    def __init__(self, scratch: Scratch, cancel: threading.Event):
        assert scratch.holder.stdin is not None and scratch.holder.stdout is not None
        self._scratch = scratch
        self._cancel = cancel
        self._requests = scratch.holder.stdin
        self._answers = scratch.holder.stdout.fileno()
        self._pending = b""
        self._number = 0

    def run(self, command: list[str], limit_bytes: int, deadline: float) -> Finished:
        """Run `command` (the argv after bwrap's `--`) with the options the launcher holds for every command."""
        self._number += 1
        # written over the last command, never truncated: the launcher reads exactly len(command) arguments
        # and ignores the stale bytes after them
        os.pwrite(self._scratch.command, b"".join(part.encode() + b"\0" for part in command), 0)
        try:
            self._requests.write(f"{self._number} {len(command)}\n".encode())
            self._requests.flush()
        except OSError as error:
            raise SandboxError(f"the episode's sandbox launcher is gone: {error}") from None
        return self._wait(limit_bytes, deadline)

    def _wait(self, limit_bytes: int, deadline: float) -> Finished:
        stdout, stderr, status_fd = self._scratch.outputs
        sinks = {stdout: HeadTail(limit_bytes), stderr: HeadTail(limit_bytes), status_fd: HeadTail(4096)}
        poller = select.poll()
        for fd in (self._answers, *sinks):
            poller.register(fd, select.POLLIN)
        target = _Target(self._scratch.pid_namespace)
        returncode: int | None = None
        killed = timed_out = False
        kill_deadline = float("inf")
        while returncode is None:
            now = time.monotonic()
            if killed and now >= kill_deadline:
                raise SandboxError("the launcher did not report a killed command's end")
            if not killed and (now >= deadline or self._cancel.is_set()):
                timed_out = not self._cancel.is_set()
                killed, kill_deadline = True, now + _KILL_WAIT_S
                target.kill()
            wait_s = kill_deadline - now if killed else min(_TICK_S, max(deadline - now, 0.0))
            for fd, _ in poller.poll(wait_s * 1000):
                if fd != self._answers:
                    _drain(fd, sinks[fd])
                    if fd == status_fd and target.init is None and target.found_init(sinks[fd]) and killed:
                        target.kill()
                    continue
                for kind, value in self._answers_read():
                    if kind == "pid" and target.bwrap is None:
                        target.bwrap = value
                        if killed:
                            target.kill()
                    elif kind == "exit":
                        returncode = value
        # every writer is gone: what is left in the pipes is the rest of the output
        for fd, sink in sinks.items():
            _drain(fd, sink)
        started = b"child-pid" in sinks[status_fd].text().encode()
        return Finished(sinks[stdout], sinks[stderr], None if killed else returncode, timed_out, started)

    def _answers_read(self) -> list[tuple[str, int]]:
        """This command's complete answer lines; an end of file means the launcher died."""
        chunk = os.read(self._answers, 4096)
        if not chunk:
            raise SandboxError("the episode's sandbox launcher died (out of memory or processes?)")
        self._pending += chunk
        *lines, self._pending = self._pending.split(b"\n")
        answers = []
        for line in lines:
            number, kind, value = line.decode().split()
            if int(number) == self._number:
                answers.append((kind, int(value)))
        return answers


@dataclass
class _Target:
    """Where a kill goes: the sandbox's pid 1 once bwrap has reported it, else bwrap.

    Killing pid 1 tears its pid namespace down before bwrap (which reaps it) exits, so when the launcher
    reports the exit every process of the command is gone. Killing bwrap first would leave pid 1 to die
    of `--die-with-parent` a moment later, after the report. Both pids are numbered in the holder's pid
    namespace; they are found on the host only when a kill is due (a timeout or a cancel), by their NSpid.
    """

    namespace: int
    """Inode of the holder's pid namespace."""
    bwrap: int | None = None
    init: int | None = None

    def found_init(self, status: HeadTail) -> bool:
        found = re.search(r'"child-pid": *(\d+)', status.text())
        if found is not None:
            self.init = int(found.group(1))
        return self.init is not None

    def kill(self) -> None:
        if self.bwrap is None:
            return
        pidfd = _host_pidfd(self.namespace, self.bwrap, self.init)
        if pidfd is not None:
            try:
                with contextlib.suppress(ProcessLookupError):
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            finally:
                os.close(pidfd)


def _host_pidfd(namespace: int, bwrap: int, init: int | None) -> int | None:
    """A pidfd on the command's pid 1 (when known) or its bwrap, both numbered in the holder's pid namespace.

    The command's bwrap is the process of that namespace numbered `bwrap`; its pid 1, the child of that
    process numbered `init` there. Neither is reaped before the launcher reports the exit, so the numbers
    cannot be reused before then; the pid is checked again once its pidfd is open.
    """
    processes = {int(name): _namespace_pids(int(name)) for name in os.listdir("/proc") if name.isdigit()}
    host_bwrap = next(
        (pid for pid, (ns_pids, _) in processes.items() if ns_pids == (bwrap,) and pid_namespace(pid) == namespace),
        None,
    )
    if host_bwrap is None:
        return None
    wanted = next(
        (pid for pid, (ns_pids, parent) in processes.items() if parent == host_bwrap and ns_pids[:1] == (init,)),
        host_bwrap,
    )
    try:
        pidfd = os.pidfd_open(wanted)
    except ProcessLookupError:
        return None
    if _namespace_pids(wanted) != processes[wanted]:  # ended, and the host pid reused, since the scan
        os.close(pidfd)
        return None
    return pidfd


def _namespace_pids(pid: int) -> tuple[tuple[int, ...], int]:
    """The process's pids below the host's (its status's NSpid, first left out) and its parent's host pid."""
    ns_pids: tuple[int, ...] = ()
    parent = 0
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status:
                if line.startswith(b"PPid:"):
                    parent = int(line.split()[1])
                elif line.startswith(b"NSpid:"):
                    ns_pids = tuple(int(value) for value in line.split()[2:])
    except (OSError, ValueError):
        pass
    return ns_pids, parent


def _drain(fd: int, sink: HeadTail) -> None:
    """Everything readable now (the pipes are non-blocking and stay open between commands)."""
    with contextlib.suppress(BlockingIOError):
        while chunk := os.read(fd, _CHUNK):
            sink.feed(chunk)
