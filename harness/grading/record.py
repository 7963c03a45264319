"""The grade of one submission, as written into results and trajectories."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from enum import Enum


class Verdict(str, Enum):
    CORRECT = "correct"
    WRONG_VALUE = "wrong_value"
    FORMAT_VIOLATION = "format_violation"
    UNPARSEABLE = "unparseable"
    NO_ANSWER = "no_answer"
    JUDGE_ERROR = "judge_error"
    """The judges could not grade (calls failed, malformed verdicts, no quorum): not a wrong answer."""

    def __str__(self) -> str:
        return self.value


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
    item_f1: float | None = None
    """Only for the `set` and `list` graders: F1 of the submitted items against the gold items."""
    judge_cost_usd: float | None = None
    """Only for the `judge` grader: what this grade's judge calls cost (cache hits are free)."""
    score: float | None = None
    """Only for the `score` grader: the mean of the judges' valid scores."""
    judge_scores: list[int | None] | None = None
    """Only for the `score` grader: each judge's score, in panel order (None: no valid score)."""
    score_range: list[int] | None = None
    """Only for the `score` grader: the [low, high] the judges scored in (the report scales scores to 0-100)."""
    grader_failure: str | None = None
    """The grader raised on this submission (a bug of ours): its traceback. The verdict is then `unparseable`
    with reason `GRADER_ERROR` (`no_answer` without a submission), the agent's graded outcome, never a retried
    failure; `replay --regrade` grades it again once the bug is fixed."""

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
