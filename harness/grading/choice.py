"""The `choice` grader: multiple-choice answers given as one option letter (A, B, ...)."""

from __future__ import annotations

import re
import unicodedata

from harness.grading.answer import find_answer_tag
from harness.grading.numeric import GoldAnswerError
from harness.grading.record import Grade, Verdict

GRADER_VERSION = "choice-1.0"
_BARE = re.compile(r"^[a-z]$")
_WRAPPED = re.compile(r"^(?:answer:?|option|choice)?\s*[(\[]?([a-z])[)\].:]?$")
_LETTER_WORD = re.compile(r"\b[a-z]\b")


def parse_gold_choice(answer: str) -> str:
    letter = answer.strip()
    if not re.fullmatch(r"[A-Za-z]", letter):
        raise GoldAnswerError(f"{answer!r} is not one option letter")
    return letter.upper()


def grade_choice(submission: str | None, answer: str) -> Grade:
    """strict: the bare letter; default and lenient also accept `(B)`, `B.`, `Option B`, `**b**`."""
    gold = parse_gold_choice(answer)
    tag = find_answer_tag(submission or "")
    if tag.reason is not None:
        return Grade.uniform(Verdict.NO_ANSWER, [tag.reason], tag.content, GRADER_VERSION)
    text = unicodedata.normalize("NFKC", tag.content or "").strip().strip("*_`").strip().lower()
    bare = _BARE.match(text)
    match = bare or _WRAPPED.match(text)
    if match is None:
        code = "MULTIPLE_OPTIONS" if len(_LETTER_WORD.findall(text)) > 1 else "NO_OPTION"
        return Grade.uniform(Verdict.UNPARSEABLE, [code], tag.content, GRADER_VERSION)
    letter = match.group(match.lastindex or 0).upper()
    if letter != gold:
        return Grade.uniform(Verdict.WRONG_VALUE, [], tag.content, GRADER_VERSION, unit=None)
    strict = Verdict.CORRECT if bare else Verdict.FORMAT_VIOLATION
    reasons = [] if bare else ["EXTRA_TEXT"]
    return Grade(Verdict.CORRECT, strict, Verdict.CORRECT, reasons, tag.content, letter, None, GRADER_VERSION)
