"""failure_labels.jsonl: the failure modes a judge panel gave each wrong episode (`annotate`), beside
results.jsonl and never changing it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import ConfigDict, TypeAdapter

from harness.core.episode_key import EpisodeKey
from harness.core.json_text import json_text
from harness.core.record import AsGiven, Number
from harness.records.jsonl import read_records, typed
from harness.records.run_folder import write_atomic

LABELLED = "labelled"
JUDGE_ERROR = "judge_error"


class ModeLabel(AsGiven):
    """A failure mode one judge named, the turn that shows it, and why (diagnostics/mode_prompt.py)."""

    mode: str
    turn: int
    reason: str


class LabelJudgeCall(AsGiven):
    """One judge's answer for one episode (diagnostics/mode_judge.py), from a call or the cache."""

    model: str
    cache_key: str
    input_tokens: int
    output_tokens: int
    cost_usd: Number | None
    cached: bool
    labels: list[ModeLabel] | None
    """None when the judge gave no valid reply."""
    failure: str | None
    """JUDGE_CALL_FAILED or JUDGE_MALFORMED; None with labels."""
    error: str | None = None
    """Why the call failed (only then)."""
    reply: str | None = None
    """The reply of a call that gave none (a malformed one's text, else None); left out of a cache hit's."""


@dataclass(frozen=True)
class EpisodeLabels:
    """One wrong episode's failure modes, as the panel's majority gave them."""

    __pydantic_config__: ClassVar[ConfigDict] = ConfigDict(extra="forbid")
    """A line with a field it lacks is not one (read_records)."""

    domain: str
    task_id: str
    epoch: int
    status: str
    """`labelled`, or `judge_error` when fewer judges than the quorum gave a valid reply."""
    modes: dict[str, int]
    """Mode -> the turn that shows it (the earliest any judge of the majority named); empty on judge_error."""
    judges: list[LabelJudgeCall]
    """Per judge: model, cached, labels (mode, turn, reason) or failure, tokens, cost."""
    prompt: str
    """The digest of the prompt (diagnostics/mode_prompt.py) the labels were asked with."""
    rule_mode: str | None = None
    """The offline rule's mode of the same episode (the row's failure_mode), for agreement."""
    cost_usd: Number | None = None
    """What the judge calls cost (cache hits cost nothing); apart from the agent's and the grading judges'."""
    trajectory_chars: int = 0
    """Size of the condensed trajectory the judges read."""
    calls: dict[str, int] = field(default_factory=dict)
    """`made` and `cached`: judge replies asked of a provider and read from the cache."""

    @property
    def episode(self) -> EpisodeKey:
        return EpisodeKey(self.domain, self.task_id, self.epoch)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EpisodeLabels:
        """A line as read back, each field of its type (else a ValidationError naming it)."""
        return typed(_LABELS, data)


def write_labels(path: Path, labels: list[EpisodeLabels]) -> None:
    """The whole file at once (a temporary file renamed over it): a crash leaves the previous labels."""
    write_atomic(path, "".join(json_text(_LABELS.dump_python(label)) + "\n" for label in labels))


def read_labels(path: Path) -> list[EpisodeLabels]:
    """Every label; a line that is not one (a hand-edited file) is an InputError naming its line and field."""
    return read_records(path, EpisodeLabels.from_dict, "a label")


_LABELS = TypeAdapter(EpisodeLabels)
