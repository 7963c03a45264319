"""The graders that need no judge: a submission and its gold give the grade, with nothing but this package, the
standard library and `harness.core` (no pydantic, no provider), so an exported task can grade in its own
container with our code (interop/harbor_export.py)."""

from __future__ import annotations

from typing import Protocol

from harness.grading.choice import GRADER_VERSION as CHOICE_VERSION
from harness.grading.choice import grade_choice, parse_gold_choice
from harness.grading.gold import GoldSpec
from harness.grading.items import ItemsGrader
from harness.grading.multi_choice import MultiChoiceGrader
from harness.grading.numeric import GRADER_VERSION as NUMERIC_VERSION
from harness.grading.numeric import grade_submission, parse_gold
from harness.grading.paper_numeric import PaperNumericGrader
from harness.grading.record import Grade
from harness.grading.tolerance import ToleranceGrader


class Grader(Protocol):
    name: str
    version: str
    """Recorded in the protocol: a resume under another version of a grader in use is refused."""

    def validate(self, gold: GoldSpec) -> None:
        """Raise `GoldAnswerError` when the gold answer cannot be graded against."""

    def grade(self, submission: str | None, gold: GoldSpec) -> Grade:
        """Grade the submission text that ended an episode."""


class _NumericGrader:
    """Deterministic numeric grading, docs/GRADING.md."""

    name = "numeric"
    version = NUMERIC_VERSION

    def validate(self, gold: GoldSpec) -> None:
        parse_gold(gold.answer, gold.answer_format, gold.rel_tol)

    def grade(self, submission: str | None, gold: GoldSpec) -> Grade:
        return grade_submission(submission, parse_gold(gold.answer, gold.answer_format, gold.rel_tol))


class _ChoiceGrader:
    """Multiple choice: the gold is one option letter."""

    name = "choice"
    version = CHOICE_VERSION

    def validate(self, gold: GoldSpec) -> None:
        parse_gold_choice(gold.answer)

    def grade(self, submission: str | None, gold: GoldSpec) -> Grade:
        return grade_choice(submission, gold.answer)


DETERMINISTIC_GRADERS: dict[str, Grader] = {
    grader.name: grader
    for grader in (
        _NumericGrader(),
        _ChoiceGrader(),
        MultiChoiceGrader(),
        ToleranceGrader(),
        ItemsGrader("set"),
        ItemsGrader("list"),
        PaperNumericGrader(relative=False),
        PaperNumericGrader(relative=True),
    )
}
"""Name -> grader, every grader but the judged ones, in the order `GRADERS` lists them."""
