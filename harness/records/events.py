"""The trajectory's events, one record per kind: each is a line `{"event": kind, "time": ..., **fields}` of
an episode's log (trajectory.py), its fields in the order they are declared here.

A field whose metadata is `_OPTIONAL` is left out of the line when it is None: imported episodes (another
agent's format) have no value for it. Readers read the lines as dicts, so old runs still read.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar

from harness.records.compact import compact_observation
from harness.records.results import ResultRow
from harness.records.trajectory import TrajectoryLog

SCHEMA_VERSION = 3
"""3: each output is stored once (compact.py): an observation's streams are places in its text, and a model
call's messages that repeat the text just shown refer to it; `read_trajectory` gives the events in full.
2: episode_start comes before the sandbox starts (its facts are in sandbox_ready); observations carry
the text the model was shown; harness_error events. An `evidence` event (the documents touched, see
harness/signals/evidence.py) comes just before episode_end; older logs lack it."""

_OPTIONAL = {"optional": True}


@dataclass(frozen=True, kw_only=True)
class Event:
    kind: ClassVar[str]

    def to_dict(self) -> dict[str, Any]:
        """The event's fields as logged (without its kind and time), in their declared order."""
        return {
            spec.name: getattr(self, spec.name)
            for spec in dataclasses.fields(self)
            if not (spec.metadata.get("optional") and getattr(self, spec.name) is None)
        }


@dataclass(frozen=True, kw_only=True)
class EpisodeStartEvent(Event):
    """Written before the sandbox starts: what regrading needs from the log alone, and the run's facts."""

    kind: ClassVar[str] = "episode_start"
    schema_version: int = SCHEMA_VERSION
    task_id: str
    domain: str
    task: dict[str, Any]
    """The task's question, gold and grading settings (records/episode_log.py `task_record`)."""
    task_digest: str
    model: str | None
    """The model as the run names it; an import's, None when its file names none."""
    sandbox: dict[str, Any] | None = field(default=None, metadata=_OPTIONAL)
    """The backend's facts (an imported episode has none)."""
    collection_hash: str | None = field(default=None, metadata=_OPTIONAL)
    config_hash: str | None = field(default=None, metadata=_OPTIONAL)
    harness_version: str | None = field(default=None, metadata=_OPTIONAL)
    ray_node: str | None = field(default=None, metadata=_OPTIONAL)
    """The Ray node that ran the episode (--executor ray)."""
    imported_from: str | None = field(default=None, metadata=_OPTIONAL)
    """The file an imported episode was read from."""
    epoch: int | None = field(default=None, metadata=_OPTIONAL)
    """Which repeat of the task this episode is, from 2 on (--epochs); None (left out) for the first."""


@dataclass(frozen=True, kw_only=True)
class SandboxReadyEvent(Event):
    kind: ClassVar[str] = "sandbox_ready"
    sandbox: dict[str, Any]
    """The started sandbox's own description."""
    start_s: float


@dataclass(frozen=True, kw_only=True)
class ModelCallEvent(Event):
    kind: ClassVar[str] = "model_call"
    turn: int
    messages: list[dict[str, Any]]
    """The messages added since the previous call (the whole conversation is every call's, in order); one that
    repeats the text just shown refers to its event (compact.py)."""
    response: dict[str, Any]
    """The reply: text, tool calls, usage, cost and the failed attempts before it."""
    latency_s: float | None = field(default=None, metadata=_OPTIONAL)
    """None for imported calls."""
    model_id: str | None = field(default=None, metadata=_OPTIONAL)
    """The model the provider says answered this call (`ModelReply.model_id`); None (left out) for models that
    name none and in logs older than it."""


@dataclass(frozen=True, kw_only=True)
class ModelErrorEvent(Event):
    kind: ClassVar[str] = "model_error"
    turn: int
    messages: list[dict[str, Any]]
    error: str
    attempts: list[dict[str, Any]]
    latency_s: float


@dataclass(frozen=True, kw_only=True)
class ActionEvent(Event):
    kind: ClassVar[str] = "action"
    turn: int
    command: str
    timeout_s: float | None = field(default=None, metadata=_OPTIONAL)
    """None for imported actions."""


@dataclass(frozen=True, kw_only=True)
class ObservationEvent(Event):
    kind: ClassVar[str] = "observation"
    turn: int
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    truncated: bool
    raw_bytes: int | None
    duration_s: float | None
    text: str
    """The observation as the model was shown it; a stream found in it is logged as its place there."""

    def to_dict(self) -> dict[str, Any]:
        return compact_observation(super().to_dict())


@dataclass(frozen=True, kw_only=True)
class FormatErrorEvent(Event):
    kind: ClassVar[str] = "format_error"
    turn: int
    problem: str
    consecutive: int | None = field(default=None, metadata=_OPTIONAL)
    text: str | None = field(default=None, metadata=_OPTIONAL)
    """What the model was told (None for imported ones)."""


@dataclass(frozen=True, kw_only=True)
class HarnessErrorEvent(Event):
    """A failure of ours that the episode's row survived (its cleanup, its evidence record, its grader)."""

    kind: ClassVar[str] = "harness_error"
    during: str
    error: str
    """The traceback, shortened."""


@dataclass(frozen=True, kw_only=True)
class JudgeCallEvent(Event):
    """One judge's verdict, from a call or the cache (harness/grading/judge.py)."""

    kind: ClassVar[str] = "judge_call"
    model: str
    prompt: str
    params: dict[str, Any]
    cache_key: str
    cached: bool
    verdict: str | None
    reply: str | None
    dropped_params: list[str]
    """Parameters the model refused, asked again without (temperature)."""
    failure: str | None
    """JUDGE_CALL_FAILED or JUDGE_MALFORMED; None with a verdict."""
    error: str | None = field(default=None, metadata=_OPTIONAL)
    """Why the call failed."""
    attempts: list[dict[str, Any]] | None = field(default=None, metadata=_OPTIONAL)
    """Failed attempts before the reply (a cache hit made none)."""
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    latency_s: float


@dataclass(frozen=True, kw_only=True)
class EvidenceEvent(Event):
    """The documents the episode touched (harness/signals/evidence.py), just before episode_end."""

    kind: ClassVar[str] = "evidence"
    method: str
    leakage_method: str
    evidence: list[str]
    touches: list[dict[str, Any]]
    opens: dict[str, int] | None
    """The exact file opens the host saw, None where it could not see them."""
    facts_seen: list[list[str]] | None = field(default=None, metadata=_OPTIONAL)
    """Per fact row of the task, the columns whose values the episode saw (signals/fact_coverage.py); None
    (left out) for a task without facts."""
    facts_stated: list[list[str] | None] | None = field(default=None, metadata=_OPTIONAL)
    """Per fact row, the columns a judge found the agent stated (signals/fact_judge.py; None for a row no judge
    answered); None (left out) when no judge was asked at the episode's end."""


@dataclass(frozen=True, kw_only=True)
class EpisodeEndEvent(Event):
    """The episode's results row, with the submission it was graded on; the last event of a finished log."""

    kind: ClassVar[str] = "episode_end"
    row: ResultRow
    submission: str | None
    """What the grader read: only answered episodes have one."""
    regraded: bool = False
    """A resume graded the logged submission again (the judges had failed); the line says so only then."""

    def to_dict(self) -> dict[str, Any]:
        fields = {**self.row.to_dict(), "submission": self.submission}
        if self.regraded:
            fields["regraded"] = True
        return fields


def write_event(log: TrajectoryLog, event: Event) -> None:
    """The one way an event is written: its line is stamped with the time it happened."""
    log.write(event.kind, **event.to_dict())
