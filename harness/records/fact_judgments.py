"""fact_judgments.jsonl: which intermediate facts each episode stated, as the fact judge found
(`annotate --facts`; harness/signals/fact_judge.py), beside results.jsonl and never changing it."""

from __future__ import annotations

from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from harness.core.episode_key import EpisodeKey
from harness.core.errors import InputError
from harness.core.json_text import json_text
from harness.records.fact_counts import FactCounts
from harness.records.run_folder import write_atomic
from harness.records.trajectory import read_jsonl

JUDGED = "judged"
JUDGE_ERROR = "judge_error"


@dataclass(frozen=True)
class EpisodeFacts:
    """One episode's stated facts."""

    domain: str
    task_id: str
    epoch: int
    status: str
    """`judged`, or `judge_error` when some row got no valid reply from any judge."""
    stated: FactCounts | None
    """Cells, rows and columns the agent's records support; None on judge_error."""
    rows: list[dict[str, Any]]
    """Per fact row: document, supported columns (None when unanswered), and each judge asked."""
    prompt: str
    """The digest of the fact judge's prompt (signals/fact_prompt.py)."""
    cost_usd: float | None = None
    """What the judge calls cost (cache hits cost nothing); apart from the agent's and the grading judges'."""
    calls: dict[str, int] = field(default_factory=dict)
    """`made` and `cached`: judge replies asked of a provider and read from the cache."""

    @property
    def episode(self) -> EpisodeKey:
        return EpisodeKey(self.domain, self.task_id, self.epoch)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EpisodeFacts:
        stated = data["stated"]
        return cls(**(data | {"stated": None if stated is None else FactCounts.from_dict(stated)}))


def write_fact_judgments(path: Path, judged: list[EpisodeFacts]) -> None:
    """The whole file at once (a temporary file renamed over it): a crash leaves the previous judgments."""
    write_atomic(path, "".join(json_text(one.to_dict()) + "\n" for one in judged))


def read_fact_judgments(path: Path) -> list[EpisodeFacts]:
    """Every judgment; a line that is not one is an InputError naming its line and field."""
    if not path.exists():
        return []
    try:
        lines = read_jsonl(path)
    except ValueError as error:
        raise InputError(f"{path}: not JSON Lines: {error}") from None
    judged = []
    for number, line in enumerate(lines, start=1):
        if not isinstance(line, dict):
            raise InputError(f"{path}:{number}: not a fact judgment (a JSON object)")
        missing = [name for name in _REQUIRED if name not in line]
        unknown = [name for name in line if name not in _FIELDS]
        if missing or unknown:
            field_name, problem = (missing[0], "missing") if missing else (unknown[0], "unknown field")
            raise InputError(f"{path}:{number}: field '{field_name}': {problem}")
        try:
            judged.append(EpisodeFacts.from_dict(line))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise InputError(f"{path}:{number}: field 'stated': not cell, row and column counts") from None
    return judged


_FIELDS = {spec.name for spec in fields(EpisodeFacts)}
_REQUIRED = [spec.name for spec in fields(EpisodeFacts) if spec.default is MISSING and spec.default_factory is MISSING]
