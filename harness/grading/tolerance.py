"""The `numeric_tol` grader: one number, correct within a relative or absolute tolerance (docs/GRADERS.md §2).

For benchmarks whose headline is tolerance-based (e.g. "within 5%"): the numeric grader's parsing,
units and flags (docs/GRADING.md), with WITHIN widened to max(ULP/2, rel_tol·|G|, abs_tol).
"""

from __future__ import annotations

from decimal import Decimal

from harness.grading.answer import find_answer_tag
from harness.grading.gold import GoldSpec
from harness.grading.literal import Unparseable, parse_number
from harness.grading.numeric import (
    TOLERATED_FLAGS,
    GoldAnswerError,
    parse_gold,
    readings_in_gold_units,
    wrong_value,
)
from harness.grading.record import Grade, Verdict

GRADER_VERSION = "numeric_tol-1.0"


def _tolerance_bound(gold: GoldSpec) -> tuple[Decimal, Decimal]:
    """(G, the widened bound); raises `GoldAnswerError` when the task sets no usable tolerance."""
    if gold.rel_tol is None and gold.abs_tol is None:
        raise GoldAnswerError("the numeric_tol grader needs 'rel_tol' or 'abs_tol'")
    number = parse_gold(gold.answer, gold.answer_format).number
    relative = Decimal(str(gold.rel_tol or 0)) * abs(number.value)
    absolute = Decimal(str(gold.abs_tol or 0))
    if number.value == 0 and gold.abs_tol is None:
        raise GoldAnswerError(f"{gold.answer!r} is zero: a relative tolerance of zero is exact; set 'abs_tol'")
    return number.value, max(number.ulp / 2, relative, absolute)


class ToleranceGrader:
    """Correct within tolerance; the three modes differ only in the format flags they tolerate."""

    name = "numeric_tol"
    version = GRADER_VERSION

    def validate(self, gold: GoldSpec) -> None:
        _tolerance_bound(gold)

    def grade(self, submission: str | None, gold: GoldSpec) -> Grade:
        target, bound = _tolerance_bound(gold)
        parsed_gold = parse_gold(gold.answer, gold.answer_format)
        tag = find_answer_tag(submission or "")
        if tag.reason is not None:
            return Grade.uniform(
                Verdict.NO_ANSWER, [tag.reason], tag.content, GRADER_VERSION, correct_at_tolerance=False
            )
        content = tag.content or ""
        try:
            predicted = parse_number(content, parsed_gold.number)
        except Unparseable as error:
            return Grade.uniform(Verdict.UNPARSEABLE, [error.code], content, GRADER_VERSION, correct_at_tolerance=False)
        readings = [i for i in readings_in_gold_units(predicted, parsed_gold.number) if abs(i.value - target) <= bound]
        if not readings:
            return wrong_value(predicted, content, GRADER_VERSION, False)
        verdicts = {}
        for mode, tolerated in TOLERATED_FLAGS.items():
            # The first reading within tolerance whose flags this mode accepts (a fraction for a percent in lenient).
            fits = any(reading.flags | predicted.flags <= tolerated for reading in readings)
            verdicts[mode] = Verdict.CORRECT if fits else Verdict.FORMAT_VIOLATION
        flags = sorted(readings[0].flags | predicted.flags)
        return Grade(
            verdict=verdicts["default"],
            verdict_strict=verdicts["strict"],
            verdict_lenient=verdicts["lenient"],
            reasons=flags,
            tag_content=content,
            parsed_value=str(predicted.value),
            unit=predicted.unit,
            grader_version=GRADER_VERSION,
            correct_at_tolerance=verdicts["default"] is Verdict.CORRECT,
        )
