"""failure_labels.jsonl: the failure modes a judge panel gave each wrong episode (`annotate`), beside
results.jsonl and never changing it."""

from __future__ import annotations

from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from harness.core.episode_key import EpisodeKey
from harness.core.errors import InputError
from harness.core.json_text import json_text
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
        return EpisodeKey(self.domain, self.task_id, self.epoch)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EpisodeLabels:
        return cls(**data)


def write_labels(path: Path, labels: list[EpisodeLabels]) -> None:
    """The whole file at once (a temporary file renamed over it): a crash leaves the previous labels."""
    write_atomic(path, "".join(json_text(asdict(label)) + "\n" for label in labels))


def read_labels(path: Path) -> list[EpisodeLabels]:
    """Every label; a line that is not one (a hand-edited file) is an InputError naming its line and field."""
    if not path.exists():
        return []
    try:
        lines = read_jsonl(path)
    except ValueError as error:
        raise InputError(f"{path}: not JSON Lines: {error}") from None
    labels = []
    for number, line in enumerate(lines, start=1):
        if not isinstance(line, dict):
            raise InputError(f"{path}:{number}: not a label (a JSON object)")
        missing = [name for name in _REQUIRED if name not in line]
        unknown = [name for name in line if name not in _FIELDS]
        if missing or unknown:
            field_name, problem = (missing[0], "missing") if missing else (unknown[0], "unknown field")
            raise InputError(f"{path}:{number}: field '{field_name}': {problem}")
        if not isinstance(line["modes"], dict) or not all(isinstance(t, int) for t in line["modes"].values()):
            raise InputError(f"{path}:{number}: field 'modes': not a mapping of mode to turn")
        labels.append(EpisodeLabels.from_dict(line))
    return labels


_FIELDS = {spec.name for spec in fields(EpisodeLabels)}
_REQUIRED = [spec.name for spec in fields(EpisodeLabels) if spec.default is MISSING and spec.default_factory is MISSING]
