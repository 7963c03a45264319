"""fact_judgments.jsonl: which intermediate facts each episode stated, as the fact judge found
(`annotate --facts`; harness/diagnostics/fact_judge.py), beside results.jsonl and never changing it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import ConfigDict, TypeAdapter

from harness.core.episode_key import EpisodeKey
from harness.core.json_text import json_text
from harness.core.record import AsGiven, Number
from harness.records.fact_counts import FactCounts
from harness.records.jsonl import read_records, typed
from harness.records.run_folder import write_atomic

JUDGED = "judged"
JUDGE_ERROR = "judge_error"
"""Only in files written before a failed row counted as not stated (read back, left out of the report)."""
ALL_ROWS = "all"
NAMED_ROWS = "named"


class EarlierReply(AsGiven):
    """A judge's earlier attempt at the same row, before the one kept (the protocol's `reading.attempts`)."""

    failure: str | None
    reply: str | None


class FactJudgeCall(AsGiven):
    """One judge's answer for one fact row (diagnostics/fact_judge.py), from its calls or the cache."""

    model: str
    cache_key: str
    input_tokens: int
    output_tokens: int
    cost_usd: Number | None
    cached: bool
    supported: list[str] | None
    """The columns the judge found stated; None when it gave no valid reply."""
    failure: str | None
    """JUDGE_CALL_FAILED or JUDGE_MALFORMED; None with a reply read."""
    calls: int | None = None
    """Replies asked of the provider for this row (0 from the cache)."""
    error: str | None = None
    """Why the last call failed (only then)."""
    reply: str | None = None
    earlier: list[EarlierReply] | None = None
    """The earlier attempts, when there were any."""


class FactRowJudgment(AsGiven):
    """One fact row's judgment: its document, the columns the judges support, whether it failed, each judge."""

    document: str
    supported: list[str]
    failed: bool
    judges: list[FactJudgeCall]


@dataclass(frozen=True)
class EpisodeFacts:
    """One episode's stated facts."""

    __pydantic_config__: ClassVar[ConfigDict] = ConfigDict(extra="forbid")
    """A line with a field it lacks is not one (read_records)."""

    domain: str
    task_id: str
    epoch: int
    status: str
    """`judged` (`judge_error` only in older files)."""
    stated: FactCounts | None
    """Cells, rows and columns the agent's records support (a row whose judgment failed counted as not, and
    counted in `failed`); None only in older files' judge_error lines."""
    rows: list[FactRowJudgment]
    """Per fact row: document, supported columns, whether its judgment failed, and each judge asked."""
    prompt: str
    """The digest of the fact judge's prompt (diagnostics/fact_prompt.py)."""
    cost_usd: Number | None = None
    """What the judge calls cost (cache hits cost nothing); apart from the agent's and the grading judges'."""
    calls: dict[str, int] = field(default_factory=dict)
    """`made` and `cached`: judge replies asked of a provider and read from the cache."""
    rows_asked: str = ALL_ROWS
    """`all` rows asked (as MuDABench), or `named`: only rows whose document the episode touched."""

    @property
    def episode(self) -> EpisodeKey:
        return EpisodeKey(self.domain, self.task_id, self.epoch)

    def to_dict(self) -> dict[str, Any]:
        fields: dict[str, Any] = _FACTS.dump_python(self)
        return fields

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EpisodeFacts:
        """A line as read back, each field of its type (else a ValidationError naming it)."""
        return typed(_FACTS, data)


def write_fact_judgments(path: Path, judged: list[EpisodeFacts]) -> None:
    """The whole file at once (a temporary file renamed over it): a crash leaves the previous judgments."""
    write_atomic(path, "".join(json_text(one.to_dict()) + "\n" for one in judged))


def read_fact_judgments(path: Path) -> list[EpisodeFacts]:
    """Every judgment; a line that is not one is an InputError naming its line and field."""
    return read_records(path, EpisodeFacts.from_dict, "a fact judgment")


_FACTS = TypeAdapter(EpisodeFacts)
