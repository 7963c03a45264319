"""One command through the episode's launcher (see `holder.py`): request, output, exit, kill.

The runner thread that runs the command does all the waiting itself in one `poll` over the launcher's
answers and the output pipes, so a command costs no thread and no sleep: it returns as soon as the
launcher reports the exit.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import threading
import time
from dataclasses import dataclass

from harness.sandboxes.base import SandboxError
from harness.sandboxes.local.holder import Scratch
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
        returncode: int | None = None
        killed = timed_out = False
        kill_deadline = next_kill = float("inf")
        while returncode is None:
            now = time.monotonic()
            if killed and now >= kill_deadline:
                raise SandboxError("the launcher did not report a killed command's end")
            if not killed and (now >= deadline or self._cancel.is_set()):
                timed_out = not self._cancel.is_set()
                killed, kill_deadline, next_kill = True, now + _KILL_WAIT_S, now
            if now >= next_kill:  # again at every tick: a process made after one sweep is caught by the next
                kill_command(self._scratch.holder_pid)
                next_kill = now + _TICK_S
            wait_s = min(_TICK_S, kill_deadline - now) if killed else min(_TICK_S, max(deadline - now, 0.0))
            for fd, _ in poller.poll(wait_s * 1000):
                if fd != self._answers:
                    _drain(fd, sinks[fd])
                    continue
                for kind, value in self._answers_read():
                    if kind == "exit":
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


def kill_command(launcher: int) -> None:
    """SIGKILL every process of the running command that is not inside a pid namespace of its own.

    The command's processes are the launcher's children (its bwrap, or the subshell about to become it)
    and their children: bwrap's pid 1, and all that ran under it go with their namespace when it dies. A
    pid 1 whose bwrap was killed before the pid 1 had bound its life to bwrap's (`--die-with-parent`) is the
    launcher's child from then on, and waits forever for bwrap's go-ahead; it is killed as one of them.
    A process made after the `/proc` scan (bwrap's pid 1, an instant later) is left for the next call.
    `launcher` is the holder's pid 1 as the host numbers it; its other children (its `sleep` while it
    waits for the namespace to empty) are killed harmlessly.
    """
    parents = {pid: _parent(pid) for pid in _host_pids()}
    children = {pid for pid, parent in parents.items() if parent == launcher}
    for pid in children | {pid for pid, parent in parents.items() if parent in children}:
        try:
            pidfd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            if _parent(pid) in children | {launcher}:  # still one of them (not a reused pid) now its pidfd is held
                with contextlib.suppress(ProcessLookupError):
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        finally:
            os.close(pidfd)


def _host_pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _parent(pid: int) -> int:
    """The process's parent's host pid; 0 when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            # the command name (in parentheses) may hold spaces and parentheses: the fields after its last ")"
            return int(stat.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _drain(fd: int, sink: HeadTail) -> None:
    """Everything readable now (the pipes are non-blocking and stay open between commands)."""
    with contextlib.suppress(BlockingIOError):
        while chunk := os.read(fd, _CHUNK):
            sink.feed(chunk)
