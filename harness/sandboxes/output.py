"""Bounded output capture: the head and tail of a stream are kept, the middle is counted.

Every backend feeds its bytes through `HeadTail`, so the model sees the same capped text everywhere.
"""

from __future__ import annotations

from collections import deque

from harness.sandboxes.base import TIMEOUT_EXIT_CODE, ExecResult


class HeadTail:
    """At most `limit_bytes` of a stream (half head, half tail), plus its total size."""

    def __init__(self, limit_bytes: int):
        self._half = max(limit_bytes // 2, 1)
        self._head = bytearray()
        self._tail: deque[bytes] = deque()
        self._tail_size = 0
        self.total_bytes = 0

    def feed(self, chunk: bytes) -> None:
        self.total_bytes += len(chunk)
        room = self._half - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self._tail.append(chunk)
            self._tail_size += len(chunk)
            while self._tail_size - len(self._tail[0]) >= self._half:
                self._tail_size -= len(self._tail.popleft())

    @property
    def truncated(self) -> bool:
        return self.total_bytes > len(self._head) + self._half

    def text(self) -> str:
        """The kept output, with a visible marker where the middle was dropped."""
        tail = b"".join(self._tail)
        if not self.truncated:
            return (bytes(self._head) + tail).decode("utf-8", errors="replace")
        tail = tail[-self._half :]
        omitted = self.total_bytes - len(self._head) - len(tail)
        marker = f"\n[... output truncated: {omitted} bytes omitted of {self.total_bytes} ...]\n"
        head = bytes(self._head).decode("utf-8", errors="ignore")
        return head + marker + tail.decode("utf-8", errors="ignore")


def capped_result(
    stdout: HeadTail, stderr: HeadTail, exit_code: int | None, timed_out: bool, duration_s: float
) -> ExecResult:
    """The result every backend returns: capped text, raw size, and no exit code for a killed command."""
    return ExecResult(
        stdout=stdout.text(),
        stderr=stderr.text(),
        exit_code=None if timed_out else exit_code,
        timed_out=timed_out,
        truncated=stdout.truncated or stderr.truncated,
        raw_bytes=stdout.total_bytes + stderr.total_bytes,
        duration_s=round(duration_s, 3),
    )


def harness_exec_timed_out(exit_code: int | None, duration_s: float, limit_s: float) -> bool:
    """`harness-exec` (E2B) and `harness-execd` (Docker) give 124 for a command they killed at its limit."""
    return exit_code == TIMEOUT_EXIT_CODE and duration_s >= limit_s * 0.95
