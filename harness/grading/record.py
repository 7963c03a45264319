"""The grade of one submission, as written into results and trajectories."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from decimal import Decimal
from enum import Enum
from typing import Any


class Verdict(str, Enum):
    CORRECT = "correct"
    WRONG_VALUE = "wrong_value"
    FORMAT_VIOLATION = "format_violation"
    UNPARSEABLE = "unparseable"
    NO_ANSWER = "no_answer"


@dataclass(frozen=True)
class Grade:
    """Verdicts in the three modes, with the reason codes and what was read from the tag."""

    verdict: Verdict
    """The headline (`default` mode) verdict."""
    verdict_strict: Verdict
    verdict_lenient: Verdict
    reasons: list[str]
    tag_content: str | None
    parsed_value: str | None
    unit: str | None
    grader_version: str
    correct_at_tolerance: bool | None = None
    """Only for tasks with `rel_tol`: within max(ULP/2, rel_tol*|gold|); never the headline."""

    @classmethod
    def uniform(
        cls,
        verdict: Verdict,
        reasons: list[str],
        tag_content: str | None,
        grader_version: str,
        parsed_value: Decimal | None = None,
        unit: str | None = None,
        correct_at_tolerance: bool | None = None,
    ) -> Grade:
        """The same verdict in every mode (no answer, unparseable, wrong value)."""
        return cls(
            verdict,
            verdict,
            verdict,
            list(reasons),
            tag_content,
            None if parsed_value is None else str(parsed_value),
            unit,
            grader_version,
            correct_at_tolerance,
        )

    def to_dict(self) -> dict[str, Any]:
        row = asdict(self)
        for key in ("verdict", "verdict_strict", "verdict_lenient"):
            row[key] = row[key].value
        return row

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> Grade:
        fields = dict(row)
        for key in ("verdict", "verdict_strict", "verdict_lenient"):
            fields[key] = Verdict(fields[key])
        return cls(**fields)
