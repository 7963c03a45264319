"""What a grader needs from a task: the gold answer and the task fields that say how to compare."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GoldSpec:
    """The gold answer with its format and tolerances (never shown to the model)."""

    answer: str
    answer_format: str | None = None
    rel_tol: float | None = None
    abs_tol: float | None = None
    question: str = ""
    """Only the judge reads it: a reference answer is graded against what was asked."""
