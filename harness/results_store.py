"""results.jsonl: append-only rows, one per finished episode attempt; the latest row per task counts.

Rows are appended and fsynced as episodes end, so a crash or `kill -9` loses nothing finished. A row
torn by a kill mid-write is dropped when the run resumes, before anything is appended after it.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from harness.outcome import Status
from harness.trajectory import read_jsonl

RETRIED_STATUSES = frozenset(
    status.value for status in (Status.MODEL_ERROR, Status.SANDBOX_ERROR, Status.HARNESS_ERROR, Status.CANCELLED)
)
"""Infrastructure failures (our side, not the agent's) and interrupted episodes: a resume runs these again."""

TaskKey = tuple[str, str]


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Every complete row, in file order (a torn last line is ignored)."""
    return read_jsonl(path) if path.exists() else []


def latest_rows(rows: list[dict[str, Any]]) -> dict[TaskKey, dict[str, Any]]:
    latest: dict[TaskKey, dict[str, Any]] = {}
    for row in rows:
        latest[(row["domain"], row["task_id"])] = row
    return latest


def finished_rows(path: Path, selected: set[TaskKey]) -> list[dict[str, Any]]:
    """The latest rows of the selected tasks that a resumed run keeps (answered or ended by a limit)."""
    latest = latest_rows(read_rows(path))
    return [row for key, row in latest.items() if key in selected and row["status"] not in RETRIED_STATUSES]


def drop_torn_tail(path: Path) -> None:
    """Cut a half-written last row (the runner was killed mid-write), so appends start on a fresh line."""
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with path.open("r+b") as handle:
            handle.truncate(data.rfind(b"\n") + 1)


class ResultsWriter:
    """Appends rows from many episode threads; each row is flushed and fsynced before it counts."""

    def __init__(self, path: Path):
        drop_torn_tail(path)
        self.path = path
        self._file = path.open("a", encoding="utf-8")
        self._lock = threading.Lock()

    def append(self, row: dict[str, Any]) -> None:
        with self._lock:
            self._file.write(json.dumps(row, ensure_ascii=False) + "\n")
            self._file.flush()
            os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()
