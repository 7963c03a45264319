"""Graders by name. A grader validates a task's gold when tasks load and grades a submission."""

from __future__ import annotations

from typing import Protocol

from harness.grading.choice import GRADER_VERSION as CHOICE_VERSION
from harness.grading.choice import grade_choice, parse_gold_choice
from harness.grading.numeric import GRADER_VERSION as NUMERIC_VERSION
from harness.grading.numeric import GoldAnswerError, grade_submission, parse_gold
from harness.grading.record import Grade, Verdict

__all__ = ["GRADERS", "GoldAnswerError", "Grade", "Grader", "Verdict", "get_grader"]


class Grader(Protocol):
    name: str
    version: str
    """Recorded in the protocol: a resume under another version of a grader in use is refused."""

    def validate(self, answer: str, answer_format: str | None, rel_tol: float | None) -> None:
        """Raise `GoldAnswerError` when the gold answer cannot be graded against."""

    def grade(self, submission: str | None, answer: str, answer_format: str | None, rel_tol: float | None) -> Grade:
        """Grade the submission text that ended an episode."""


class NumericGrader:
    """Deterministic numeric grading, docs/GRADING.md."""

    name = "numeric"
    version = NUMERIC_VERSION

    def validate(self, answer: str, answer_format: str | None, rel_tol: float | None) -> None:
        parse_gold(answer, answer_format, rel_tol)

    def grade(self, submission: str | None, answer: str, answer_format: str | None, rel_tol: float | None) -> Grade:
        return grade_submission(submission, parse_gold(answer, answer_format, rel_tol))


class ChoiceGrader:
    """Multiple choice: the gold is one option letter."""

    name = "choice"
    version = CHOICE_VERSION

    def validate(self, answer: str, answer_format: str | None, rel_tol: float | None) -> None:
        parse_gold_choice(answer)

    def grade(self, submission: str | None, answer: str, answer_format: str | None, rel_tol: float | None) -> Grade:
        return grade_choice(submission, answer)


GRADERS: dict[str, Grader] = {"numeric": NumericGrader(), "choice": ChoiceGrader()}


def get_grader(name: str) -> Grader:
    return GRADERS[name]
