"""One import engine for every foreign format: episodes keyed by (domain, task id, epoch), and a row's fields
carried through an export and back by one generic path."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.interop.imported import row_fields
from harness.records.jsonl import read_jsonl
from tests.conftest import REPO
from tests.run.test_epochs import many_tasks


@pytest.mark.slow
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


NEW_FIELD = '''    note: str | None = None
    """A field added to the row in this one place (the test's)."""

    def to_dict(self)'''
CARRY = """
import json, sys
from pathlib import Path

import pytest
from harness.analysis.viewer_site import ViewerSite
from harness.cli.main import main
from harness.interop.imported import row_fields
from harness.records.jsonl import read_jsonl

run, tasks, collections, results, out = map(Path, sys.argv[1:])
folders = ["--tasks-dir", str(tasks), "--collections-dir", str(collections), "--results-dir", str(results)]
found = {}
for form in ("inspect", "mini-swe-agent"):
    assert main(["export", form, str(run), str(out / form)]) == 0
    assert main(["import", form, str(out / form), *folders, "--run-id", form]) == 0
    rows = read_jsonl(results / form / "results.jsonl")
    site = ViewerSite([results / form])
    shown = [site.episode(number)["row"] for number in range(len(site.episodes))]
    found[form] = {"rows": sorted(str(row["note"]) for row in rows), "viewer": sorted(str(r["note"]) for r in shown)}
print(json.dumps(found))
"""


def with_note(path: Path, note_of) -> None:
    """Each row of PATH (results.jsonl, or a trajectory's episode_end) given the new field, as a run would write it."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for line in lines:
        if line.get("event", "episode_end") == "episode_end":
            line["note"] = note_of(line)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_a_field_added_to_the_row_alone_is_carried_through_export_import_and_the_viewer(mini, tmp_path):
    """The package copied with one line added to `ResultRow`: its value comes back on every format's import and
    in the viewer's episode data, with no list extended."""
    many_tasks(mini, 2)
    outcome = mini.run("--model", mini.script([{"bash": "echo 42"}, "<answer>42</answer>"]), "--epochs", "2")
    assert outcome.exit_code == 0, outcome.output
    note_of = lambda line: f"{line['task_id']}@{line['epoch']}"  # noqa: E731
    for path in [outcome.run_dir / "results.jsonl", *outcome.run_dir.glob("episodes/*/*.jsonl")]:
        with_note(path, note_of)
    copy = tmp_path / "copy"
    shutil.copytree(REPO / "harness", copy / "harness", ignore=shutil.ignore_patterns("__pycache__"))
    results = copy / "harness" / "records" / "results.py"
    source = results.read_text()
    assert source.count("    def to_dict(self)") == 1
    results.write_text(source.replace("    def to_dict(self)", NEW_FIELD))
    arguments = [outcome.run_dir, mini.tasks_dir, mini.root / "collections", mini.results_dir, tmp_path / "out"]
    done = subprocess.run(
        [sys.executable, "-c", CARRY, *map(str, arguments)],
        cwd=tmp_path,
        env=os.environ | {"PYTHONPATH": str(copy)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    notes = sorted(f"{task}@{epoch}" for task in ("t00", "t01") for epoch in (1, 2))
    expected = {"rows": notes, "viewer": notes}
    assert json.loads(done.stdout.splitlines()[-1]) == {"inspect": expected, "mini-swe-agent": expected}


def test_a_forged_row_field_in_an_exported_log_is_one_line_exit_2_and_writes_nothing(mini):
    from inspect_ai.log import read_eval_log, write_eval_log

    outcome = mini.run("--model", "oracle")
    out = mini.root / "inspect"
    assert main(["export", "inspect", str(outcome.run_dir), str(out)]) == 0
    log = read_eval_log(str(out / "run.eval"))
    log.samples[0].metadata["harness"]["queue_s"] = True  # the file is input: a row field of the wrong type
    write_eval_log(log, str(out / "run.eval"))
    mini.capsys.readouterr()
    assert main(["import", "inspect", str(out), *mini.folder_arguments("forged")]) == 2
    error = mini.capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "sample 't1': malformed" in error and "row field 'queue_s'" in error
    assert not (mini.results_dir / "forged").exists()


def test_an_epoch_below_one_is_one_line_exit_2_and_writes_nothing(mini):
    outcome = mini.run("--model", "oracle")
    out = mini.root / "mswea"
    assert main(["export", "mini-swe-agent", str(outcome.run_dir), str(out)]) == 0
    path = out / "mini" / "t1.traj.json"
    data = json.loads(path.read_text())
    data["info"]["harness"]["epoch"] = 0
    path.write_text(json.dumps(data))
    mini.capsys.readouterr()
    assert main(["import", "mini-swe-agent", str(out), *mini.folder_arguments("forged")]) == 2
    error = mini.capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "t1.traj.json: field 'epoch': 0 is not a whole number from 1" in error
    assert not (mini.results_dir / "forged").exists()


def test_a_foreign_rows_lone_surrogate_is_read_not_refused():
    """A log's row field as `json.loads` gives it (a lone surrogate an agent sent): read as our rows read it
    (U+FFFD), where the import refused the whole file."""
    assert row_fields({"answer": "4\ud8002", "turns": 1}) == {"answer": "4\ufffd2", "turns": 1}
