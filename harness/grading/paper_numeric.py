"""FinDocMRE's own numeric graders, as its paper scores (Appendix B.1.2; docs/GRADERS.md §8).

The reply is standardized as the paper's regular expressions do: one number is read out of the answer, and
whatever surrounds it (a percent sign, a scale word, a currency, `约`) is dropped, since the paper's prompt
asks for "a pure number without any units" and the gold is in the unit the question names. Then
`findocmre_precise` is exact equality and `findocmre_approx` is |pred - ref| / |ref| <= 0.05, a zero reference
correct only for 0. One rule, so the three modes agree.
"""

from __future__ import annotations

import re
from decimal import Decimal

from harness.grading.answer import find_answer_tag
from harness.grading.gold import GoldSpec
from harness.grading.numeric import GoldAnswerError
from harness.grading.record import Grade, Verdict

PRECISE_VERSION = "findocmre_precise-1.0"
APPROX_VERSION = "findocmre_approx-1.0"
PAPER_REL_TOL = Decimal("0.05")
"""The paper's approximate tolerance, whatever the task's own `rel_tol` says."""

_GROUPED = re.compile(r"(?<=\d)[,，](?=\d{3}(?!\d))")
_NUMBER = re.compile(r"[-+−]?(?:\d+(?:\.\d*)?|\.\d+)")


class _NoNumber(ValueError):
    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


def standardized_number(text: str) -> Decimal:
    """The one number in `text`, thousands separators removed; raises `_NoNumber` (NO_NUMBER, SEVERAL_NUMBERS)."""
    found = _NUMBER.findall(_GROUPED.sub("", text))
    if not found:
        raise _NoNumber("NO_NUMBER")
    if len(found) > 1:
        raise _NoNumber("SEVERAL_NUMBERS")
    return Decimal(found[0].replace("−", "-"))


def _gold_value(gold: GoldSpec) -> Decimal:
    try:
        return standardized_number(gold.answer)
    except _NoNumber as error:
        raise GoldAnswerError(f"{gold.answer!r} is not one number ({error.code})") from None


def _is_right(predicted: Decimal, reference: Decimal, relative: bool) -> bool:
    if not relative or reference == 0:
        return predicted == reference
    return abs(predicted - reference) / abs(reference) <= PAPER_REL_TOL


class PaperNumericGrader:
    """`findocmre_precise` (exact equality) or `findocmre_approx` (5% relative, a zero reference exact)."""

    def __init__(self, relative: bool) -> None:
        self.relative = relative
        self.name = "findocmre_approx" if relative else "findocmre_precise"
        self.version = APPROX_VERSION if relative else PRECISE_VERSION

    def validate(self, gold: GoldSpec) -> None:
        _gold_value(gold)

    def grade(self, submission: str | None, gold: GoldSpec) -> Grade:
        reference = _gold_value(gold)
        tag = find_answer_tag(submission or "")
        if tag.reason is not None:
            return Grade.uniform(Verdict.NO_ANSWER, [tag.reason], tag.content, self.version, correct_at_tolerance=False)
        content = tag.content or ""
        try:
            predicted = standardized_number(content)
        except _NoNumber as error:
            return Grade.uniform(Verdict.UNPARSEABLE, [error.code], content, self.version, correct_at_tolerance=False)
        right = _is_right(predicted, reference, self.relative)
        verdict = Verdict.CORRECT if right else Verdict.WRONG_VALUE
        return Grade.uniform(verdict, [], content, self.version, predicted, None, right)
