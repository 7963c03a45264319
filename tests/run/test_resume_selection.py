"""Resuming a run is resuming what it selected: the same --run-id with another --domain is refused in one line
naming both, before anything is written (it said "resuming: 0 of 2 kept" and appended the other domain's rows)."""

from __future__ import annotations

import json


def _second_domain(mini) -> None:
    (mini.root / "collections" / "other").mkdir()
    (mini.root / "collections" / "other" / "note.md").write_text("seven\n")
    task = {
        "id": "o1",
        "domain": "other",
        "question": "Which number?",
        "answer": "7",
        "answer_format": "integer",
        "solution": "echo 7",
    }
    (mini.tasks_dir / "other.jsonl").write_text(json.dumps(task) + "\n")


def test_the_same_run_id_with_another_domain_is_refused(mini):
    _second_domain(mini)
    assert mini.run("--model", "oracle").exit_code == 0
    run_dir = mini.results_dir / "run"
    before = {path: path.read_bytes() for path in run_dir.rglob("*") if path.is_file()}
    code = mini.run("--model", "oracle", "--domain", "other")
    assert code.exit_code == 2
    assert code.output.strip() == (
        "error: --run-id run: the run was made for --domain 'mini', not 'other'; "
        "resume it with --domain mini, or choose another --run-id"
    )
    assert {path: path.read_bytes() for path in run_dir.rglob("*") if path.is_file()} == before


def test_the_same_domains_in_another_order_resume(mini):
    _second_domain(mini)
    assert mini.run("--model", "oracle", "--domain", "mini,other").exit_code == 0
    outcome = mini.run("--model", "oracle", "--domain", "other, mini")
    assert outcome.exit_code == 0 and "resuming run: 2 of 2 episodes kept, 0 to run" in outcome.output
