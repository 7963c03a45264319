"""failure_labels.jsonl: the failure modes a judge panel gave each wrong episode (`annotate`), beside
results.jsonl and never changing it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import ConfigDict, TypeAdapter

from harness.core.episode_key import EpisodeKey
from harness.core.json_text import json_text
from harness.core.record import Number
from harness.records.jsonl import read_records, typed
from harness.records.run_folder import write_atomic

LABELLED = "labelled"
JUDGE_ERROR = "judge_error"


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
    judges: list[dict[str, Any]]
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
    write_atomic(path, "".join(json_text(asdict(label)) + "\n" for label in labels))


def read_labels(path: Path) -> list[EpisodeLabels]:
    """Every label; a line that is not one (a hand-edited file) is an InputError naming its line and field."""
    return read_records(path, EpisodeLabels.from_dict, "a label")


_LABELS = TypeAdapter(EpisodeLabels)
