"""results.jsonl: append-only rows, one per finished episode attempt; the latest row per task counts.

Rows are appended and fsynced as episodes end, so a crash or `kill -9` loses nothing finished. A row
torn by a kill mid-write is dropped when the run resumes, before anything is appended after it.
"""

from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from harness.core.episode_key import EpisodeKey
from harness.core.json_text import json_text
from harness.core.record import Number
from harness.core.status import INTERRUPTED, Status
from harness.grading import Verdict
from harness.records.fact_counts import FactCounts, RetrievedCoverage
from harness.records.jsonl import read_records, typed

MODE_FIELDS = {"strict": "verdict_strict", "default": "verdict", "lenient": "verdict_lenient"}
"""Grading mode -> the row field holding its verdict."""

TaskKey = tuple[str, str]
"""(domain, task id): one task of a run, whatever its epoch (an episode's key, with its epoch, is `EpisodeKey`)."""


@dataclass(frozen=True)
class ResultRow:
    """One row of results.jsonl: how one episode attempt ended and how it was graded."""

    task_id: str
    domain: str
    status: Status
    answer: str | None
    """The answer tag's content, None when there was none."""
    verdict: Verdict
    """The headline (`default` mode) verdict."""
    verdict_strict: Verdict
    verdict_lenient: Verdict
    reasons: list[str]
    correct_at_tolerance: bool | None
    parsed_value: str | None
    unit: str | None
    """The unit read with the number, normalised (`pp`, `%`, `billion`); "" for none, None when unread."""
    turns: int
    duration_s: Number
    """The agent's own time: from the sandbox being up to the end, without waits for our slots and without the
    provider's failed attempts and backoff waits (`retry_wait_s`, `failed_attempts_s`)."""
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    reasoning_tokens: int
    cost_usd: Number | None
    """Sum of the calls' costs, computed from their tokens and the run's prices (run.yaml `prices`); None when
    no price was known."""
    detail: str | None
    """Why a limit or failure ended the episode (with the traceback for a harness_error)."""
    grader_version: str
    queue_s: Number = 0.0
    """Time spent waiting for a sandbox slot and for model-connection slots (not the agent's time)."""
    sandbox_start_s: Number = 0.0
    """Time the sandbox took to start (not the agent's time)."""
    task_digest: str = ""
    """sha256 of what was asked and graded (question, gold, format, grader, rel_tol): a resume re-runs a
    task whose digest changed."""
    evidence_recall: Number | None = None
    """Task evidence files reached / evidence files (harness/diagnostics/evidence.py); None when the task lists none."""
    evidence_reached: dict[str, int] = field(default_factory=dict)
    """Evidence file -> the turn it was first reached."""
    files_touched: int = 0
    """Collection documents reached (named in a command or shown in an output)."""
    evidence_method: str = ""
    """How the touched documents were found ("" in rows written before evidence records)."""
    failure_mode: str | None = None
    """A wrong episode's failure mode (harness/diagnostics/failure_modes.py); None when correct or an infrastructure
    failure."""
    refused_network: int = 0
    """Commands whose output shows a refused network connect (harness/diagnostics/escapes.py, a lower bound)."""
    refused_writes: int = 0
    """Commands whose output shows a refused write ("Read-only file system")."""
    canary: bool = False
    """The task is a canary: its answer exists only on the host, so a correct answer is a containment failure."""
    item_f1: Number | None = None
    """The `set` and `list` graders' item-level F1; None for other graders."""
    judge_cost_usd: Number | None = None
    """What the judge calls grading this row cost (apart from the agent's `cost_usd`); None when none was paid."""
    task_type: str | None = None
    """The task's `type`, for per-type accuracy; None when the task has none."""
    epoch: int = 1
    """Which repeat of the task this episode is (1 .. --epochs); rows written before epochs are epoch 1."""
    attempt: int = 1
    """Which attempt of the episode within its run this row is (`--retry-errors` runs an infrastructure failure
    again; the earlier attempts' trajectories are under previous/)."""
    cache_write_tokens: int = 0
    """Prompt tokens written to the provider's cache (priced apart; part of `input_tokens`)."""
    retry_wait_s: Number = 0.0
    """Backoff waits after failed model calls (the server's Retry-After or exponential): not the agent's time."""
    failed_attempts_s: Number = 0.0
    """Time the failed model-call attempts took (a 5xx after a delay, a refused request): not the agent's time."""
    model_ids: dict[str, int] = field(default_factory=dict)
    """Calls per model id the provider returned (`model_call` events' `model_id`): more than one means the
    provider swapped snapshots behind the alias. Empty (and left out of the line) for models that name none
    and rows older than it."""
    score: Number | None = None
    """The `score` grader's mean of the judges' valid scores; None for other graders (the field is then left out)."""
    judge_scores: list[int | None] | None = None
    """The `score` grader's score of each judge, in panel order (None: no valid score); else left out."""
    score_range: list[int] | None = None
    """The `score` grader's [low, high]; else left out."""
    facts_seen: FactCounts | None = None
    """The task's facts whose values showed in the output of a command that read their document
    (harness/diagnostics/fact_coverage.py); None when the task lists no facts (the field is then left out)."""
    facts_stated: FactCounts | None = None
    """The task's facts a judge found supported by the agent's own record of each document
    (harness/diagnostics/fact_judge.py); None when not asked (the field is then left out)."""
    facts_retrieved: RetrievedCoverage | None = None
    """The task's gold facts in words that the chunks a solver retrieved hold, by the double-check judges'
    conservative count (harness/diagnostics/retrieved_coverage.py; MuDABench's RAG process accuracy); None when not
    asked (the field is then left out)."""
    workflow_stages: dict[str, bool] | None = None
    """The agentic workflow's stages (planning, extraction, normalization, code) -> whether the episode got each
    right (harness/diagnostics/workflow_stages.py; MuDABench's Table 4); None for other solvers or a task without
    facts (the field is then left out)."""
    task_groups: dict[str, str] = field(default_factory=dict)
    """The task's `groups` (grouping -> value, e.g. `language: zh`), for the report's per-group tables; empty
    (and left out of the line) for tasks without groups."""

    def to_dict(self) -> dict[str, Any]:
        row = asdict(self)
        for name in LEFT_OUT_WHEN_NONE:  # rows of tasks without facts stay as they were written before facts
            if row[name] is None:
                del row[name]
        for name in ("model_ids", "task_groups"):
            if not row[name]:
                del row[name]
        return row

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> ResultRow:
        """A row as read back; fields a newer harness adds are ignored, and ones an older one lacked default."""
        known = {name: row[name] for name in ROW_FIELDS if name in row}
        known.setdefault("unit", None)
        return typed(_ROWS, known)

    @property
    def key(self) -> TaskKey:
        """The row's task (its epoch aside)."""
        return self.domain, self.task_id

    @property
    def episode(self) -> EpisodeKey:
        return EpisodeKey(self.domain, self.task_id, self.epoch)

    def is_correct(self, mode: str = "default") -> bool:
        return getattr(self, MODE_FIELDS[mode]) is Verdict.CORRECT

    @property
    def needs_rerun(self) -> bool:
        """An infrastructure failure or an interrupted episode: a resume runs it again."""
        return self.status in INTERRUPTED  # a resume runs these again

    @property
    def needs_regrade(self) -> bool:
        """The judges failed: a resume asks them again about the logged answer (the agent is not run again)."""
        return self.verdict is Verdict.JUDGE_ERROR


ROW_FIELDS = tuple(spec.name for spec in fields(ResultRow))
"""Every field of a row, in its order: what carries a row whole (an export and its import) iterates over these,
so a field added to `ResultRow` travels without a list of its own."""
LEFT_OUT_WHEN_NONE = (
    "score",
    "judge_scores",
    "score_range",
    "facts_seen",
    "facts_stated",
    "facts_retrieved",
    "workflow_stages",
)
"""Row fields newer than most run folders: left out when None, so rows without them read and compare as before."""
_ROWS = TypeAdapter(ResultRow)


def read_rows(path: Path) -> list[ResultRow]:
    """Every complete row, in file order (a torn last line is ignored)."""
    return read_records(path, ResultRow.from_dict, "a results row")


def latest_rows(rows: list[ResultRow]) -> dict[EpisodeKey, ResultRow]:
    """The latest row per episode (domain, task id, epoch)."""
    return {row.episode: row for row in rows}


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

    def append(self, row: ResultRow) -> None:
        with self._lock:
            self._file.write(json_text(row.to_dict()) + "\n")
            self._file.flush()
            os.fsync(self._file.fileno())

    def close(self) -> None:
        """Close the file; the bytes of a row whose append failed (a full disk) are left unwritten, as its
        append already said: the file is closed all the same, and the rows before it stay."""
        with contextlib.suppress(OSError):
            self._file.close()
