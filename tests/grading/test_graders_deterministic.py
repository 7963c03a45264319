"""The multi_choice, numeric_tol, set and list graders (docs/GRADERS.md §1-§3), one case per row."""

from __future__ import annotations

import pytest

from harness.grading import GRADERS, GoldAnswerError, GoldSpec

C, W, F, U, N = "correct", "wrong_value", "format_violation", "unparseable", "no_answer"


def grade(grader: str, gold: GoldSpec, content: str):
    return GRADERS[grader].grade(f"<answer>{content}</answer>", gold)


@pytest.mark.parametrize(
    ("content", "default", "strict", "reasons"),
    [
        ("A, C", C, C, []),
        ("A,C", C, F, ["FORMAT"]),
        ("A&C", C, F, ["FORMAT"]),
        ("AC", C, F, ["FORMAT"]),
        ("A 和 C", C, F, ["FORMAT"]),
        ("A和C", C, F, ["FORMAT"]),
        ("(A)(C)", C, F, ["FORMAT"]),
        ("C, A", C, F, ["FORMAT"]),
        ("a and c", C, F, ["FORMAT"]),
        ("Answer: A, C", C, F, ["FORMAT"]),
        ("A, C, A", C, F, ["FORMAT", "DUPLICATE"]),
        ("A", W, W, []),
        ("A, B, C", W, W, []),
        ("A, F", U, U, ["INVALID_OPTION"]),
        ("A or C", U, U, ["ALTERNATIVES"]),
        ("Both A and C are right", U, U, ["NO_OPTION"]),
        ("ace", U, U, ["NO_OPTION"]),
        ("1, 3", U, U, ["NO_OPTION"]),
    ],
)
def test_multi_choice_reads_letter_sets_and_never_prose(content, default, strict, reasons):
    result = grade("multi_choice", GoldSpec("A, C", "letters A-E joined by ', '"), content)
    assert (result.verdict.value, result.verdict_strict.value, result.reasons) == (default, strict, reasons)


def test_multi_choice_prose_with_capitals_is_not_scanned_for_letters():
    result = grade("multi_choice", GoldSpec("A, C"), "I think A is wrong, so C")
    assert (result.verdict.value, result.reasons) == (U, ["NO_OPTION"])


def test_multi_choice_without_tag_is_no_answer():
    result = GRADERS["multi_choice"].grade("A, C", GoldSpec("A, C"))
    assert (result.verdict.value, result.reasons) == (N, ["NO_TAG"])


@pytest.mark.parametrize(
    ("answer", "answer_format"),
    [("C, A", None), ("A, A", None), ("A,C, D", None), ("A, F", "A-E"), ("a, c", None), ("A or C", None)],
)
def test_multi_choice_rejects_bad_golds(answer, answer_format):
    with pytest.raises(GoldAnswerError):
        GRADERS["multi_choice"].validate(GoldSpec(answer, answer_format))


@pytest.mark.parametrize(
    ("gold", "content", "default", "strict", "lenient"),
    [
        (GoldSpec("100.0", rel_tol=0.05), "104.9", C, C, C),
        (GoldSpec("100.0", rel_tol=0.05), "105.0", C, C, C),
        (GoldSpec("100.0", rel_tol=0.05), "105.01", W, W, W),
        (GoldSpec("100.0", rel_tol=0.05), "-100.0", W, W, W),
        (GoldSpec("-20.0%", rel_tol=0.05), "-19.2", C, F, C),
        (GoldSpec("-20.0%", rel_tol=0.05), "-0.195", F, F, C),
        (GoldSpec("-20.0%", rel_tol=0.05), "-0.18", W, W, W),
        (GoldSpec("12.5%", rel_tol=0.05), "0.125", F, F, C),
        (GoldSpec("1.2 billion", rel_tol=0.05), "1,230,000,000", F, F, C),
        (GoldSpec("0.00", abs_tol=0.01), "-0.01", C, C, C),
        (GoldSpec("0.00", abs_tol=0.01), "0.02", W, W, W),
        (GoldSpec("100.0", rel_tol=0.05), "about 103", C, F, C),
        (GoldSpec("100.0", rel_tol=0.05), "103 or 104", U, U, U),
    ],
)
def test_numeric_tol_headline_is_within_tolerance(gold, content, default, strict, lenient):
    result = grade("numeric_tol", gold, content)
    assert (result.verdict.value, result.verdict_strict.value, result.verdict_lenient.value) == (
        default,
        strict,
        lenient,
    )
    assert result.correct_at_tolerance is (default == C)


def test_numeric_tol_bound_is_exact_decimal_not_float():
    # 0.1 * 3 in float is 0.30000000000000004: the bound 3 * 0.1 must hold exactly at its edge.
    assert grade("numeric_tol", GoldSpec("3", rel_tol=0.1), "3.3").verdict.value == C


@pytest.mark.parametrize(
    ("gold", "message"),
    [
        (GoldSpec("100.0"), "needs 'rel_tol' or 'abs_tol'"),
        (GoldSpec("0.0", rel_tol=0.05), "set 'abs_tol'"),
        (GoldSpec("12,3.4", rel_tol=0.05), "not a number"),
    ],
)
def test_numeric_tol_rejects_golds_it_cannot_grade(gold, message):
    with pytest.raises(GoldAnswerError, match=message):
        GRADERS["numeric_tol"].validate(gold)


@pytest.mark.parametrize(
    ("grader", "content", "default", "strict", "f1", "reasons"),
    [
        ("set", "AAPL, MSFT, NVDA", C, C, 1.0, []),
        ("set", "NVDA; AAPL; MSFT", C, C, 1.0, []),
        ("set", "- AAPL\n- MSFT\n- NVDA", C, C, 1.0, []),
        ("set", "aapl, msft, nvda", C, F, 1.0, ["CASE"]),
        ("set", "AAPL, MSFT, NVDA, AAPL", C, F, 1.0, ["DUPLICATE"]),
        ("set", "AAPL, MSFT", W, W, 0.8, []),
        ("set", "AAPL, MSFT, NVDA, TSLA", W, W, 0.857143, []),
        ("set", "TSLA", W, W, 0.0, []),
        ("set", "AAPL MSFT NVDA", W, W, 0.0, []),
        ("list", "AAPL, MSFT, NVDA", C, C, 1.0, []),
        ("list", "NVDA, MSFT, AAPL", W, W, 1.0, ["ORDER"]),
        ("list", "1. AAPL\n2. MSFT\n3. NVDA", C, C, 1.0, []),
    ],
)
def test_set_and_list_compare_items_and_record_f1(grader, content, default, strict, f1, reasons):
    result = grade(grader, GoldSpec("AAPL, MSFT, NVDA"), content)
    assert (result.verdict.value, result.verdict_strict.value, result.item_f1, result.reasons) == (
        default,
        strict,
        f1,
        reasons,
    )


def test_set_with_empty_answer_items_is_unparseable():
    result = grade("set", GoldSpec("AAPL, MSFT"), " , ; ")
    assert (result.verdict.value, result.reasons, result.item_f1) == (U, ["NO_ITEMS"], None)


@pytest.mark.parametrize("answer", ["AAPL, aapl", " , "])
def test_set_rejects_gold_with_duplicate_or_no_items(answer):
    with pytest.raises(GoldAnswerError):
        GRADERS["set"].validate(GoldSpec(answer))


def test_every_grader_has_a_name_and_a_version():
    assert {name: (grader.name, bool(grader.version)) for name, grader in GRADERS.items()} == {
        name: (name, True)
        for name in (
            "numeric",
            "choice",
            "multi_choice",
            "numeric_tol",
            "set",
            "list",
            "judge",
            "score",
            "findocmre_precise",
            "findocmre_approx",
        )
    }
