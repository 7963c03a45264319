"""Graders by name. A grader validates a task's gold when tasks load and grades a submission."""

from __future__ import annotations

import dataclasses
import traceback

from harness.grading.deterministic import DETERMINISTIC_GRADERS, Grader
from harness.grading.gold import GoldSpec
from harness.grading.judge import JudgeGrader, JudgeLog, JudgeNotConfigured, JudgePanel
from harness.grading.judge_score import ScoreGrader, score_grade
from harness.grading.numeric import GoldAnswerError
from harness.grading.record import Grade, Verdict

__all__ = [
    "GRADERS",
    "JUDGED",
    "GoldAnswerError",
    "GoldSpec",
    "Grade",
    "Verdict",
    "answer",
    "grade",
    "is_judged",
    "judge",
    "judge_cache",
    "judge_prompt",
    "judge_protocol",
    "lenient_json",
    "literal",
    "record",
]


GRADERS: dict[str, Grader] = {
    **DETERMINISTIC_GRADERS,
    **{grader.name: grader for grader in (JudgeGrader(), ScoreGrader())},
}


JUDGED = ("judge", "score")
"""The graders that ask a judge panel."""


def is_judged(grader: str) -> bool:
    """Whether the grader asks a judge panel (its grade is a provider call, which a Ctrl-C abandons)."""
    return grader in JUDGED


def get_grader(name: str) -> Grader:
    return GRADERS[name]


def grade(
    grader: str, submission: str | None, gold: GoldSpec, judge: JudgePanel | None = None, log: JudgeLog | None = None
) -> Grade:
    """Every grade goes through here: the `judge` grader asks its panel (`log` gets each `judge_call`),
    the others are deterministic. A judge-graded task without a panel is refused before anything runs
    (runs, imports and re-grades check it), so `JudgeNotConfigured` here is a bug of ours."""
    if is_judged(grader) and judge is None:
        raise JudgeNotConfigured(f"the {grader} grader needs a judge panel (--judge)")
    try:
        if grader == "judge" and judge is not None:
            return judge.grade(submission, gold, log)
        if grader == "score" and judge is not None:
            return score_grade(judge, submission, gold, log)
        return GRADERS[grader].grade(submission, gold)
    except Exception as error:  # a grader's bug on the agent's own output: graded, never an infrastructure failure
        return _failed_grade(grader, submission, gold, error)


GRADER_ERROR = "GRADER_ERROR"
_FAILURE_CHARS = 4000


def _failed_grade(grader: str, submission: str | None, gold: GoldSpec, error: Exception) -> Grade:
    """The grade of a submission whose grader raised: unparseable (no_answer without one), the traceback kept."""
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))[-_FAILURE_CHARS:]
    verdict = Verdict.NO_ANSWER if submission is None else Verdict.UNPARSEABLE
    version = GRADERS[grader].version if grader in GRADERS else ""
    no_credit = None if gold.rel_tol is None and gold.abs_tol is None else False
    grade = Grade.uniform(verdict, [GRADER_ERROR], None, version, correct_at_tolerance=no_credit)
    return dataclasses.replace(grade, grader_failure=text)
