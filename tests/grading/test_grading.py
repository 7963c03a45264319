"""Every rule of docs/GRADING.md, one case per row: gold, answer_format, submission -> verdicts and reasons."""

from __future__ import annotations

import pytest

from harness.grading import GoldSpec
from harness.grading.numeric import GoldAnswerError, grade_submission, parse_gold

C, W, F, U, N = "correct", "wrong_value", "format_violation", "unparseable", "no_answer"


def grade(gold: str, content: str, answer_format: str | None = None, rel_tol: float | None = None):
    return grade_submission(f"<answer>{content}</answer>", parse_gold(gold, answer_format, rel_tol))


# (gold, answer_format, tag content, strict, default, lenient, reason codes)
CASES = [
    # the specification's own examples
    ("-18.03 pp", None, "−18.03 pp", C, C, C, []),
    ("-18.03 pp", None, "+18.03 pp", W, W, W, []),
    ("23.687%", None, "0.23687", F, F, C, ["UNIT_SCALE"]),
    ("5.517 x", None, "5.52x", F, F, F, ["DECIMALS", "INSUFFICIENT_PRECISION"]),
    # canonicalisation: Unicode, minus signs, LaTeX, wrappers, case and whitespace
    ("12.5%", None, "１２.５％", C, C, C, []),
    ("-3.25", None, "\ufe633.25", C, C, C, []),
    ("-3.25", None, "\u20133.25", C, C, C, []),
    ("-3.25", None, "$\u20133.25", C, C, C, []),
    ("3", None, "3\u20134", U, U, U, ["MULTIPLE_NUMBERS"]),
    ("12.5%", None, "\\boxed{12.5\\%}", C, C, C, []),
    ("12.5%", None, "$12.5\\%$", C, C, C, []),
    ("2.5 x", None, "$2.5 \\times$", C, C, C, []),
    ("12.5%", None, "**12.5%**.", C, C, C, []),
    ("12.5%", None, "  `12.5  PERCENT` ", C, C, C, []),
    ("+1.20 pp", None, "+1.20 Percentage Points", C, C, C, []),
    ("+1.20 pp", None, "+1.20 p.p.", C, C, C, []),
    # number literals and separators
    ("1234567", None, "1,234,567", C, C, C, []),
    ("1234", None, "1,234", C, C, C, []),
    ("1.234", None, "1.234", C, C, C, []),
    ("1234.5", None, "1.234,5", F, C, C, ["DECIMAL_COMMA"]),
    ("2.5", None, "2,5", F, C, C, ["DECIMAL_COMMA"]),
    ("1500", None, "1.5e3", F, C, C, ["DECIMALS", "NOTATION"]),
    ("1520", None, "1.5e3", F, F, F, ["DECIMALS", "INSUFFICIENT_PRECISION", "NOTATION"]),
    ("1500", None, "1.500e3", F, C, C, ["NOTATION"]),
    ("12", None, "1,23,4", U, U, U, ["BAD_NUMBER"]),
    ("12", None, "nan", U, U, U, ["NON_FINITE"]),
    ("12", None, "∞", U, U, U, ["NON_FINITE"]),
    ("12", None, "Infinity", U, U, U, ["NON_FINITE"]),
    ("12", None, "12 info", F, F, F, ["EXTRA_TEXT", "UNIT_MISMATCH"]),  # `inf` only as a word
    ("12", None, "twelve", U, U, U, ["NO_NUMBER"]),
    ("12", None, "12 or 13", U, U, U, ["MULTIPLE_NUMBERS"]),
    ("12", None, "12-13", U, U, U, ["MULTIPLE_NUMBERS"]),
    ("12", None, "12 (FY2023)", U, U, U, ["MULTIPLE_NUMBERS"]),
    ("12", None, "1" * 41, U, U, U, ["TOO_LONG"]),
    ("12", None, "12 " + "x" * 260, U, U, U, ["TOO_LONG"]),
    # prefix: sign, parentheses, currency, hedges, extra text
    ("-5.00", None, "(5.00)", F, C, C, ["SIGN_STYLE"]),
    ("-18.03 pp", None, "(18.03) pp", F, C, C, ["SIGN_STYLE"]),  # parentheses without the unit
    ("-18.03 pp", None, "(18.03 pp)", F, C, C, ["SIGN_STYLE"]),  # parentheses with the unit
    ("-5.00", None, "$(5.00)", F, C, C, ["SIGN_STYLE"]),
    ("-5.00", None, "($5.00)", F, C, C, ["SIGN_STYLE"]),
    ("-5.00", None, "(5.00", W, W, W, ["EXTRA_TEXT"]),  # an unclosed parenthesis is text, not a sign
    ("$5.00", None, "€5.00", F, F, F, ["UNIT_MISMATCH"]),  # currencies that conflict
    ("-5.00", None, "-$5.00", C, C, C, []),
    ("-5.00", None, "$-5.00", C, C, C, []),
    ("1234", None, "$1,234", C, C, C, []),
    ("1234", None, "1,234 USD", C, C, C, []),
    ("12", None, "approximately 12", F, C, C, ["HEDGE"]),
    ("12", None, "~12", F, C, C, ["HEDGE"]),
    ("12", None, "≈ 12", F, C, C, ["HEDGE"]),
    ("12", None, "= 12", F, C, C, ["HEDGE"]),
    ("12", None, "approx. 12", F, C, C, ["HEDGE"]),
    ("12", None, "approx 12", F, F, F, ["EXTRA_TEXT"]),  # the hedge list has `approx.` only
    ("12", None, "Answer: 12", F, C, C, ["HEDGE"]),
    ("12", None, "the total is 12", F, F, F, ["EXTRA_TEXT"]),
    ("12", None, "12 apples", F, F, F, ["EXTRA_TEXT", "UNIT_MISMATCH"]),
    # units and scale
    ("12.5%", None, "12.5", F, C, C, ["UNIT_MISSING"]),
    ("12.5%", None, "12.5 pp", F, F, F, ["UNIT_MISMATCH"]),
    ("2.5 x", None, "2.5 times", C, C, C, []),
    ("2.5 billion", None, "2.5 bn", C, C, C, []),
    ("2.5 billion", None, "2,500 million", F, F, C, ["DECIMALS", "SCALE"]),
    ("2.5 billion", None, "2500000000", F, F, C, ["DECIMALS", "SCALE"]),
    ("1.250 pp/year", None, "1.250 pp per year", C, C, C, []),
    ("1.250 pp/year", None, "1.250 % per year", F, F, F, ["UNIT_MISMATCH"]),
    ("2.104 years", None, "2.104 yrs", C, C, C, []),
    # a gold unit holding digits: its words are no number, however its spaces are written
    ("3.5 t CO2", None, "3.5 t CO2", C, C, C, []),
    ("3.5 t CO2", None, "3.5 tCO2", C, C, C, []),
    ("3.5 m2/year", None, "3.5 m2 per year", C, C, C, []),
    ("3.5 m2", None, "3.5 m3", U, U, U, ["MULTIPLE_NUMBERS"]),
    ("12.5 pp", None, "$\\mathrm{12.5}\\text{ pp}$", C, C, C, []),
    # comparison: half-ULP interval, decimals, coarse answers, wrong values
    ("-17.050", None, "-17.0505", F, C, C, ["DECIMALS"]),
    ("-17.050", None, "-17.0506", W, W, W, []),
    ("16.87", None, "16.870", F, C, C, ["DECIMALS"]),
    ("16.87", None, "16.9", F, F, F, ["DECIMALS", "INSUFFICIENT_PRECISION"]),
    ("16.87", None, "16.88", W, W, W, []),
    ("16.87", None, "approximately 17.5", W, W, W, ["HEDGE"]),
    # sign rule and signed zero
    ("+2.50 pp", "[sign]x.xx pp", "2.50 pp", F, C, C, ["SIGN_MISSING"]),
    ("+2.50 pp", "'+x.xx pp' or '-x.xx pp'", "+2.50 pp", C, C, C, []),
    ("2.50 pp", None, "2.50 pp", C, C, C, []),
    ("0.00 pp", "[sign]x.xx pp", "-0.00 pp", C, C, C, []),
    ("0.00 pp", "[sign]x.xx pp", "0.00 pp", C, C, C, []),
]


@pytest.mark.parametrize(("gold", "answer_format", "content", "strict", "default", "lenient", "reasons"), CASES)
def test_numeric_grading_rule(gold, answer_format, content, strict, default, lenient, reasons):
    result = grade(gold, content, answer_format)
    assert (result.verdict_strict.value, result.verdict.value, result.verdict_lenient.value) == (
        strict,
        default,
        lenient,
    )
    assert result.reasons == sorted(reasons)


def test_last_answer_tag_wins():
    gold = parse_gold("16.87", None)
    assert grade_submission("<answer>16.80</answer> … <answer>16.87</answer>", gold).verdict.value == C


def test_prose_without_tag_is_no_answer():
    result = grade_submission("The answer is 16.87.", parse_gold("16.87", None))
    assert (result.verdict.value, result.reasons) == (N, ["NO_TAG"])


def test_unclosed_last_tag_does_not_fall_back_to_an_earlier_pair():
    result = grade_submission("<answer>16.87</answer> then <answer>16.8", parse_gold("16.87", None))
    assert (result.verdict.value, result.reasons) == (N, ["UNCLOSED_TAG"])


def test_empty_tag_is_no_answer():
    result = grade_submission("<answer>  </answer>", parse_gold("16.87", None))
    assert (result.verdict.value, result.reasons) == (N, ["EMPTY_TAG"])


def test_missing_submission_is_no_answer():
    assert grade_submission(None, parse_gold("1", None)).verdict.value == N


def test_gold_unit_with_digits_is_not_counted_as_a_number():
    assert grade("3.5 co2", "3.5 co2").verdict.value == C


def test_relative_tolerance_is_its_own_metric():
    result = grade("100.0", "104.0", rel_tol=0.05)
    assert result.verdict.value == W
    assert result.correct_at_tolerance is True
    assert grade("100.0", "106.0", rel_tol=0.05).correct_at_tolerance is False


@pytest.mark.parametrize(
    ("gold", "answer_format", "problem"),
    [
        ("12,3.4", None, "BAD_NUMBER"),
        ("about 12", None, "HEDGE"),
        ("1,5", None, "DECIMAL_COMMA"),
        ("12 or 13", None, "MULTIPLE_NUMBERS"),
        ("12.50%", "x.xxx%", "asks for 3"),
        ("12.50%", "three decimal places", "asks for 3"),
    ],
)
def test_unusable_gold_is_a_dataset_error(gold, answer_format, problem):
    with pytest.raises(GoldAnswerError, match=problem):
        parse_gold(gold, answer_format)


@pytest.mark.parametrize(
    ("content", "strict", "default", "reasons"),
    [
        ("B", C, C, []),
        ("b", C, C, []),
        ("(B)", F, C, ["EXTRA_TEXT"]),
        ("Option B.", F, C, ["EXTRA_TEXT"]),
        ("**B**", C, C, []),
        ("C", W, W, []),
        ("B or C", U, U, ["MULTIPLE_OPTIONS"]),
        ("forty-two", U, U, ["NO_OPTION"]),
    ],
)
def test_choice_grader(content, strict, default, reasons):
    from harness.grading import get_grader

    result = get_grader("choice").grade(f"<answer>{content}</answer>", GoldSpec("B"))
    assert (result.verdict_strict.value, result.verdict.value, result.reasons) == (strict, default, reasons)


def test_choice_gold_must_be_one_letter():
    from harness.grading import get_grader

    with pytest.raises(GoldAnswerError, match="option letter"):
        get_grader("choice").validate(GoldSpec("AB"))


@pytest.mark.parametrize(
    ("gold", "content", "at_tolerance"),
    [
        ("100.0", "about 104", True),  # HEDGE is tolerated by the default mode
        ("100.0", "104 apples", False),  # EXTRA_TEXT never is
        ("12.50%", "12.9 pp", False),  # % and pp are never converted
        ("12.50%", "0.129", False),  # a fraction for a percent is lenient-only
    ],
)
def test_accuracy_at_tolerance_is_the_default_mode_with_a_wider_interval(gold, content, at_tolerance):
    assert grade(gold, content, rel_tol=0.05).correct_at_tolerance is at_tolerance


@pytest.mark.parametrize("submission", ["no tag", "<answer>12 or 13</answer>"])
def test_unanswered_task_with_rel_tol_counts_as_wrong_at_tolerance(submission):
    """accuracy@tol is over every task with rel_tol: an episode without a number is not left out."""
    result = grade_submission(submission, parse_gold("100.0", None, 0.05))
    assert result.correct_at_tolerance is False
