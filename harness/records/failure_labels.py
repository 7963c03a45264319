"""failure_labels.jsonl: the failure modes a judge panel gave each wrong episode (`annotate`), beside
results.jsonl and never changing it."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.records.results import EpisodeKey
from harness.records.run_folder import write_atomic
from harness.records.trajectory import read_jsonl

LABELLED = "labelled"
JUDGE_ERROR = "judge_error"


@dataclass(frozen=True)
class EpisodeLabels:
    """One wrong episode's failure modes, as the panel's majority gave them."""

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
    """The digest of the prompt (signals/mode_prompt.py) the labels were asked with."""
    rule_mode: str | None = None
    """The offline rule's mode of the same episode (the row's failure_mode), for agreement."""
    cost_usd: float | None = None
    """What the judge calls cost (cache hits cost nothing); apart from the agent's and the grading judges'."""
    trajectory_chars: int = 0
    """Size of the condensed trajectory the judges read."""
    calls: dict[str, int] = field(default_factory=dict)
    """`made` and `cached`: judge replies asked of a provider and read from the cache."""

    @property
    def episode(self) -> EpisodeKey:
        return self.domain, self.task_id, self.epoch

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EpisodeLabels:
        return cls(**data)


def write_labels(path: Path, labels: list[EpisodeLabels]) -> None:
    """The whole file at once (a temporary file renamed over it): a crash leaves the previous labels."""
    write_atomic(path, "".join(json.dumps(asdict(label), ensure_ascii=False) + "\n" for label in labels))


def read_labels(path: Path) -> list[EpisodeLabels]:
    return [EpisodeLabels.from_dict(line) for line in read_jsonl(path)] if path.exists() else []
