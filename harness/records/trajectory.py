"""The episode's event log: append-only JSON Lines, one event a line (events.py), flushed as it happens.

A crash leaves a valid prefix; an episode without `episode_end` is unfinished.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from harness.core.json_text import json_text
from harness.grading.judge import JudgeLog
from harness.records.compact import expand
from harness.records.events import JudgeCallEvent
from harness.records.jsonl import read_jsonl

if TYPE_CHECKING:
    from harness.records.events import Event


def event_line(event: str, **fields: Any) -> str:
    """One event as its JSON line, stamped with the time it happened."""
    record = {"event": event, "time": round(time.time(), 3), **fields}
    return json_text(record, default=str) + "\n"


class TrajectoryLog(Protocol):
    """Where an episode's events go: a file (`TrajectoryWriter`) or, on a Ray node, the driver's stream."""

    def write(self, event: Event) -> None:
        """The one way an event is written: its line, stamped with the time it happened, and the event kept."""

    def events(self) -> list[Event]:
        """Every event written through this log so far, as written: the episode's diagnostics read them from here,
        not from its file."""

    def close(self) -> None: ...


def judge_log(log: TrajectoryLog) -> JudgeLog:
    """Judge calls into the trajectory as `judge_call` events (grading/judge.py gives each call's fields, checked
    against the event's types). A call the event cannot hold is left out, as it always was: a score judge's
    verdict (an int), and a call with `earlier` attempts or `counted_incorrect` (a known gap, issue 47)."""

    def write(fields: dict[str, Any]) -> None:
        with contextlib.suppress(OSError, ValueError):  # a full disk never costs the grade
            log.write(JudgeCallEvent.model_validate(fields))

    return write


class KeptEvents:
    """The events a log wrote, kept in memory; a log sends each one's line with `_send`."""

    def __init__(self) -> None:
        self._written: list[Event] = []

    def write(self, event: Event) -> None:
        self._send(event_line(event.kind, **event.to_dict()), event)
        self._written.append(event)

    def events(self) -> list[Event]:
        return list(self._written)

    def _send(self, line: str, event: Event) -> None:
        """Send EVENT, written as LINE."""
        raise NotImplementedError


class TrajectoryWriter(KeptEvents):
    def __init__(self, path: Path, append: bool = False):
        """`append`: add to a finished trajectory (a resume grading it again), else start a new one; its
        `events` are those written since."""
        super().__init__()
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._file = path.open("a" if append else "w", encoding="utf-8")

    def _send(self, line: str, event: Event) -> None:
        self.append(line)

    def append(self, line: str) -> None:
        """Write one event line, possibly made elsewhere (on a Ray node, see run/executors/ray.py)."""
        self._file.write(line)
        self._file.flush()

    def close(self) -> None:
        if not self._file.closed:
            os.fsync(self._file.fileno())
            self._file.close()


def read_trajectory(path: Path | str) -> list[dict[str, Any]]:
    """Every complete event of an episode's trajectory, in full whether its outputs were stored once or not."""
    return list(expand(read_jsonl(path)))
