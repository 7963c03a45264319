"""A task's `evidence` names files of its collection: a name that is not one (a typo, a file renamed by a
rebuild) is refused where the task is read with its collection, in one line naming file, line and field
(it was accepted, and the task's evidence recall could never reach 1)."""

from __future__ import annotations

import json

from harness.cli.main import main


def _evidence(mini, names: list[str]) -> None:
    task = json.loads((mini.tasks_dir / "mini.jsonl").read_text())
    lines = [json.dumps(task | {"id": "t0"}), json.dumps(task | {"evidence": names})]
    (mini.tasks_dir / "mini.jsonl").write_text("\n".join(lines) + "\n")


def test_a_run_refuses_evidence_that_is_not_in_the_collection(mini):
    _evidence(mini, ["ledger.md", "ledgr.md"])
    outcome = mini.run("--model", "oracle")
    assert outcome.exit_code == 2
    assert outcome.output.strip() == (
        f"error: {mini.tasks_dir / 'mini.jsonl'}:2: field 'evidence': 'ledgr.md' is not a file of collection 'mini'"
    )
    assert not mini.results_dir.exists()


def test_a_run_takes_evidence_that_is_in_the_collection(mini):
    _evidence(mini, ["ledger.md"])
    outcome = mini.run("--model", "oracle")
    assert outcome.exit_code == 0 and outcome.rows[-1]["evidence_recall"] is not None


def test_the_leakage_check_refuses_it_too(mini, capsys):
    _evidence(mini, ["missing/ledger.md"])
    folders = ["--tasks-dir", str(mini.tasks_dir), "--collections-dir", str(mini.root / "collections")]
    assert main(["leakage", "--domain", "mini", *folders]) == 2
    said = capsys.readouterr().err.strip()
    assert said.endswith(":2: field 'evidence': 'missing/ledger.md' is not a file of collection 'mini'")
