"""FinDocMRE's numeric graders as its paper scores (Appendix B.1.2): exact equality, a pure 5%, a zero reference
equal only to 0, the reply's number read out past a unit the prompt forbade; only under the findocmre profile."""

from __future__ import annotations

import json

import pytest

from harness.grading import GRADERS, GoldSpec, Verdict, grade


def _verdict(grader: str, reply: str, gold: str) -> Verdict:
    return grade(grader, f"<answer>{reply}</answer>", GoldSpec(gold, rel_tol=0.05)).verdict


@pytest.mark.parametrize(
    ("grader", "reply", "gold", "right"),
    [
        ("findocmre_precise", "42.5%", "42.5", True),
        ("findocmre_precise", "12.3 billion", "12.3", True),
        ("findocmre_precise", "12.3亿元", "12.3", True),
        ("findocmre_precise", "约26.6", "26.6", True),
        ("findocmre_precise", "1,234.50", "1234.5", True),
        ("findocmre_precise", "42.54", "42.5", False),  # rounds to the gold: right under our numeric grader
        ("findocmre_approx", "3.4", "3", False),  # within half a unit of the gold's last digit: right under ours
        ("findocmre_approx", "3.15", "3", True),
        ("findocmre_approx", "2.85%", "3", True),
        ("findocmre_approx", "0", "0", True),
        ("findocmre_approx", "0.01", "0", False),
        ("findocmre_precise", "0", "0", True),
        ("findocmre_precise", "0.01", "0", False),
    ],
)
def test_the_papers_rules(grader: str, reply: str, gold: str, right: bool):
    assert _verdict(grader, reply, gold) is (Verdict.CORRECT if right else Verdict.WRONG_VALUE)


def test_a_reply_with_no_number_or_several_is_unparseable_and_registered_with_a_version():
    assert _verdict("findocmre_approx", "about the same", "3") is Verdict.UNPARSEABLE
    assert _verdict("findocmre_approx", "2023: 3.1", "3") is Verdict.UNPARSEABLE
    assert {GRADERS[name].version for name in ("findocmre_precise", "findocmre_approx")} == {
        "findocmre_precise-1.0",
        "findocmre_approx-1.0",
    }
    # AGORA's graders keep their rules: the same replies judged otherwise
    assert _verdict("numeric", "42.5%", "42.5") is not Verdict.CORRECT
    assert _verdict("numeric", "42.54", "42.5") is Verdict.CORRECT
    assert _verdict("numeric_tol", "3.4", "3") is Verdict.CORRECT


def test_a_percent_is_right_under_the_findocmre_profile_and_wrong_under_agoras(mini):
    task = json.loads((mini.tasks_dir / "mini.jsonl").read_text())
    task |= {"answer": "42.5", "answer_format": None, "type": "numeric_exact", "grader": "numeric"}
    (mini.tasks_dir / "mini.jsonl").write_text(json.dumps(task) + "\n")
    paper = mini.run("--model", mini.script(["<answer>42.5%</answer>"]), "--profile", "findocmre", run_id="paper")
    assert paper.exit_code == 0 and paper.rows[0]["verdict"] == "correct", paper.output
    assert paper.trajectory("t1")[0]["task"]["grader"] == "findocmre_precise"
    agora = mini.run("--model", mini.script(["<answer>42.5%</answer>"]), run_id="agora")
    assert agora.exit_code == 0 and agora.rows[0]["verdict"] != "correct", agora.output
