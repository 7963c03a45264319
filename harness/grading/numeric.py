"""The `numeric` grader: one number against the gold, three modes (docs/GRADING.md §2.5-§2.7)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from harness.grading.answer import find_answer_tag
from harness.grading.literal import ParsedNumber, Unparseable, parse_number
from harness.grading.record import Grade, Verdict

GRADER_VERSION = "numeric-1.1"

TOLERATED_FLAGS: dict[str, frozenset[str]] = {
    "strict": frozenset(),
    "default": frozenset(
        {"UNIT_MISSING", "DECIMALS", "SIGN_STYLE", "SIGN_MISSING", "DECIMAL_COMMA", "NOTATION", "HEDGE"}
    ),
}
TOLERATED_FLAGS["lenient"] = TOLERATED_FLAGS["default"] | {"UNIT_SCALE", "SCALE"}

_TEMPLATE_DECIMALS = re.compile(r"x\.(x+)")
_WORD_DECIMALS = re.compile(r"\b(one|two|three|four|five|six|[0-9]+) decimal places?\b", re.IGNORECASE)
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


class GoldAnswerError(ValueError):
    """A task's gold answer or answer_format is unusable: a dataset error."""


@dataclass(frozen=True)
class _Interpretation:
    """One reading of the prediction in the gold's units."""

    value: Decimal
    ulp: Decimal
    flags: frozenset[str]


@dataclass(frozen=True)
class _GoldAnswer:
    """The parsed gold: value, ULP, unit and whether the format asks for an explicit sign."""

    number: ParsedNumber
    sign_required: bool
    rel_tol: Decimal | None = None


def parse_gold(answer: str, answer_format: str | None, rel_tol: float | None = None) -> _GoldAnswer:
    """Validate a gold answer when tasks load; raises `GoldAnswerError` with a readable reason."""
    try:
        number = parse_number(answer)
    except Unparseable as error:
        raise GoldAnswerError(f"{answer!r} is not a number ({error.code})") from error
    if number.flags:
        raise GoldAnswerError(f"{answer!r} is not in canonical form ({', '.join(sorted(number.flags))})")
    if answer_format:
        for places in _format_decimals(answer_format):
            if places != number.decimals:
                raise GoldAnswerError(
                    f"{answer!r} has {number.decimals} decimals but answer_format {answer_format!r} asks for {places}"
                )
    sign_required = bool(answer_format) and ("+" in (answer_format or "") or "[sign]" in (answer_format or ""))
    tolerance = Decimal(str(rel_tol)) if rel_tol is not None else None
    return _GoldAnswer(number, sign_required, tolerance)


def _format_decimals(answer_format: str) -> list[int]:
    places = [len(match.group(1)) for match in _TEMPLATE_DECIMALS.finditer(answer_format)]
    for match in _WORD_DECIMALS.finditer(answer_format):
        word = match.group(1).lower()
        places.append(_NUMBER_WORDS[word] if word in _NUMBER_WORDS else int(word))
    return places


def grade_submission(submission: str | None, gold: _GoldAnswer) -> Grade:
    """Grade the text that ended an episode (None when the episode ended without a submission)."""
    tag = find_answer_tag(submission or "")
    # A task with rel_tol counts every episode in accuracy@tol, so no answer is `False` there, not None.
    no_credit = None if gold.rel_tol is None else False
    if tag.reason is not None:
        return Grade.uniform(
            Verdict.NO_ANSWER, [tag.reason], tag.content, GRADER_VERSION, correct_at_tolerance=no_credit
        )
    assert tag.content is not None
    try:
        predicted = parse_number(tag.content, gold.number)
    except Unparseable as error:
        return Grade.uniform(
            Verdict.UNPARSEABLE, [error.code], tag.content, GRADER_VERSION, correct_at_tolerance=no_credit
        )
    return _compare(predicted, gold, tag.content)


def _compare(predicted: ParsedNumber, gold: _GoldAnswer, content: str) -> Grade:
    target = gold.number
    interpretations = readings_in_gold_units(predicted, target)
    half_ulp = target.ulp / 2
    chosen = next((i for i in interpretations if abs(i.value - target.value) <= half_ulp), None)
    within = chosen is not None
    if chosen is None:
        chosen = next(
            (i for i in interpretations if i.ulp > target.ulp and abs(i.value - target.value) <= i.ulp / 2),
            None,
        )
        if chosen is not None:
            chosen = _Interpretation(chosen.value, chosen.ulp, chosen.flags | {"INSUFFICIENT_PRECISION"})
    at_tolerance = _correct_at_tolerance(predicted, gold, interpretations)
    if chosen is None:
        return wrong_value(predicted, content, GRADER_VERSION, at_tolerance)
    flags = set(chosen.flags) | predicted.flags
    if chosen.ulp != target.ulp:
        flags.add("DECIMALS")
    if gold.sign_required and predicted.value > 0 and not predicted.explicit_plus and target.value != 0:
        flags.add("SIGN_MISSING")
    verdicts = {
        mode: Verdict.CORRECT if within and flags <= tolerated else Verdict.FORMAT_VIOLATION
        for mode, tolerated in TOLERATED_FLAGS.items()
    }
    return Grade(
        verdict=verdicts["default"],
        verdict_strict=verdicts["strict"],
        verdict_lenient=verdicts["lenient"],
        reasons=sorted(flags),
        tag_content=content,
        parsed_value=str(predicted.value),
        unit=predicted.unit,
        grader_version=GRADER_VERSION,
        correct_at_tolerance=at_tolerance,
    )


def _correct_at_tolerance(
    predicted: ParsedNumber, gold: _GoldAnswer, interpretations: list[_Interpretation]
) -> bool | None:
    """The default mode with WITHIN widened to max(ULP/2, rel_tol*|G|) (docs/GRADING.md §2.7)."""
    if gold.rel_tol is None:
        return None
    target = gold.number
    bound = max(target.ulp / 2, gold.rel_tol * abs(target.value))
    chosen = next((i for i in interpretations if abs(i.value - target.value) <= bound), None)
    return chosen is not None and chosen.flags | predicted.flags <= TOLERATED_FLAGS["default"]


def wrong_value(predicted: ParsedNumber, content: str, version: str, at_tolerance: bool | None) -> Grade:
    """A number that parsed but is not the gold's: wrong in every mode, with what was read of it."""
    return Grade.uniform(
        Verdict.WRONG_VALUE, sorted(predicted.flags), content, version, predicted.value, predicted.unit, at_tolerance
    )


def readings_in_gold_units(predicted: ParsedNumber, target: ParsedNumber) -> list[_Interpretation]:
    value, ulp = predicted.value, predicted.ulp
    if predicted.unit == target.unit:
        return [_Interpretation(value, ulp, frozenset())]
    if not predicted.unit:
        readings = [_Interpretation(value, ulp, frozenset({"UNIT_MISSING"}))]
        if target.unit == "%":
            readings.append(_Interpretation(value * 100, ulp * 100, frozenset({"UNIT_SCALE"})))
        if target.scale is not None:
            readings.append(_Interpretation(value / target.scale, ulp / target.scale, frozenset({"SCALE"})))
        return readings
    if predicted.scale is not None and target.scale is not None:
        factor = predicted.scale / target.scale
        return [_Interpretation(value * factor, ulp * factor, frozenset({"SCALE"}))]
    return [_Interpretation(value, ulp, frozenset({"UNIT_MISMATCH"}))]
