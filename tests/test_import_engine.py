"""One import engine for every foreign format: episodes keyed by (domain, task id, epoch), and a row's fields
carried through an export and back by one generic path."""

from __future__ import annotations

import json

from harness.cli.main import main
from harness.records.trajectory import read_jsonl
from tests.test_epochs import many_tasks


def test_a_run_with_epochs_keeps_every_epoch_through_export_and_import_inspect(mini):
    many_tasks(mini, 2)
    outcome = mini.run("--model", mini.script([{"bash": "echo 42"}, "<answer>42</answer>"]), "--epochs", "3")
    assert outcome.exit_code == 0, outcome.output
    out = mini.root / "inspect"
    assert main(["export", "inspect", str(outcome.run_dir), str(out)]) == 0
    assert main(["import", "inspect", str(out), *mini.folder_arguments("back")]) == 0
    back = read_jsonl(mini.results_dir / "back" / "results.jsonl")
    assert sorted((row["task_id"], row["epoch"]) for row in back) == [
        (task, epoch) for task in ("t00", "t01") for epoch in (1, 2, 3)
    ]
    assert "0 samples unmatched" in mini.capsys.readouterr().out
    episodes = mini.results_dir / "back" / "episodes" / "mini"
    assert json.loads((episodes / "t01~epoch3.jsonl").read_text().splitlines()[0])["epoch"] == 3
