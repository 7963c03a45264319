"""The pre-run leakage check: golds, solutions and ids printed in a task's collection, and the allow-list."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.inputs.leakage import _printed, find_leaks
from harness.inputs.tasks import Task


def task(**fields):
    return Task(**({"id": "q-17", "domain": "d", "question": "Q?", "answer": "42"} | fields))


def test_a_gold_printed_as_a_whole_word_is_a_leak_but_not_inside_another_number(tmp_path: Path):
    (tmp_path / "a.md").write_text("The answer is 42.\n")
    (tmp_path / "b.md").write_text("1425 and 4.2 and 14.745,42 and 42.5\n")
    hits = find_leaks([task()], {"d": tmp_path})
    assert [(hit.what, hit.document) for hit in hits] == [("gold", "a.md")]


def test_the_solution_and_the_task_id_are_leaks_and_leak_allow_allows_the_gold_only(tmp_path: Path):
    (tmp_path / "a.md").write_text("see q-17: 42; run `grep 42 a.md`\n")
    hits = find_leaks([task(solution="grep 42 a.md", leak_allow="a quoted figure")], {"d": tmp_path})
    assert {(hit.what, hit.allowed) for hit in hits} == {("gold", "a quoted figure"), ("solution", None), ("id", None)}


def leaky_project(mini, allow=None):
    row = {"id": "t1", "domain": "mini", "question": "Q?", "answer": "40"} | ({"leak_allow": allow} if allow else {})
    (mini.tasks_dir / "mini.jsonl").write_text(json.dumps(row) + "\n")


def check(mini):
    return main(["leakage", "--tasks-dir", str(mini.tasks_dir), "--collections-dir", str(mini.root / "collections")])


def test_leakage_command_lists_hits_and_exits_1(mini):
    leaky_project(mini)  # the mini collection's ledger prints 40
    assert check(mini) == 1
    assert "mini/t1: gold printed in ledger.md" in mini.capsys.readouterr().out
    leaky_project(mini, allow="the 2020 figure is a lookup")
    assert check(mini) == 0
    assert "(allowed: the 2020 figure is a lookup)" in mini.capsys.readouterr().out


def test_a_run_warns_at_its_start_about_leaking_tasks(mini):
    leaky_project(mini)
    outcome = mini.run("--model", mini.script(["<answer>40</answer>"]))
    assert outcome.exit_code == 0
    assert "warning: leakage check: 1 tasks have their gold, solution or id printed in their collection (mini/t1)" in (
        outcome.output
    )


def test_an_empty_leak_allow_reason_is_refused(mini):
    leaky_project(mini, allow=" ")
    outcome = mini.run("--model", "oracle")
    assert outcome.exit_code == 2 and "mini.jsonl:1: field 'leak_allow'" in outcome.output
    assert not outcome.run_dir.exists()


@pytest.mark.parametrize(
    ("text", "gold", "printed"),
    [("a 42 b", "42", True), ("1425", "42", False), ("x 4.2 y", "4.2", True), ("1,42", "42", False),
     ("42.5", "42", False), ("42.", "42", True), ("-42", "42", True), ("(42)", "42", True), ("b42", "42", False),
     ("42b", "42", False), ("4.2", "42", False), ("total 1,234.5 EUR", "1,234.5", True)],
)  # fmt: skip
def test_a_gold_counts_as_printed_only_as_a_whole_number(text: str, gold: str, printed: bool):
    assert _printed(gold, text, whole_word=True) is printed


def test_the_start_of_a_run_scans_a_collection_once_per_collection_and_task_set(mini, monkeypatch):
    from harness.inputs import leakage

    scans = []
    scan = leakage._domain_leaks
    monkeypatch.setattr(leakage, "_domain_leaks", lambda *arguments: scans.append(1) or scan(*arguments))
    leaky_project(mini)
    ledger = mini.root / "collections" / "mini" / "ledger.md"
    original = ledger.read_text()
    warning = "leakage check: 1 tasks have their gold, solution or id printed in their collection (mini/t1)"
    for run_id in ("first", "second"):  # the second run reads the first's scan, with the same warning
        outcome = mini.run("--model", mini.script(["<answer>40</answer>"]), run_id=run_id)
        assert outcome.exit_code == 0 and warning in outcome.output
    assert len(scans) == 1
    ledger.write_text("| year | units |\n| 2020 | 41 |\n")
    outcome = mini.run("--model", mini.script(["<answer>40</answer>"]), run_id="changed")
    assert len(scans) == 2 and "leakage check" not in outcome.output  # a changed collection is scanned again
    ledger.write_text(original)  # the first run's collection again, with a changed task
    leaky_project(mini, allow="a lookup")
    outcome = mini.run("--model", mini.script(["<answer>40</answer>"]), run_id="allowed")
    assert len(scans) == 3 and "leakage check" not in outcome.output  # so is a changed task
