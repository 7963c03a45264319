"""`import harbor`: a Harbor job folder as a run folder our report reads. The fixtures (tests/fixtures/harbor_job,
made by scripts/harbor_job_fixture.py with Harbor 0.26.0's own models): `oracle/`, the real job Harbor's CLI wrote
running `export harbor` of tasks/demo with its oracle agent and its local Docker environment; `agent/`, two
trials of demo-001 written through Harbor's `TrialResult` and ATIF `Trajectory` models."""

from __future__ import annotations

import csv
import json
import shutil

import pytest

from harness.cli.main import main
from harness.records.jsonl import read_jsonl
from harness.records.trajectory import read_trajectory
from tests.conftest import REPO

JOBS = REPO / "tests" / "fixtures" / "harbor_job"
DEMO = ("--tasks-dir", str(REPO / "tasks"), "--collections-dir", str(REPO / "collections"))


def _import(job: str, results, run_id: str) -> list[dict]:
    code = main(["import", "harbor", str(JOBS / job), "--run-id", run_id, "--results-dir", str(results), *DEMO])
    assert code == 0
    return read_jsonl(results / run_id / "results.jsonl")


def test_the_real_oracle_job_imports_as_a_run_and_sits_in_one_report_with_ours(tmp_path, capsys):
    rows = _import("oracle", tmp_path, "harbor-oracle")
    assert len(rows) == 13 and {row["task_id"] for row in rows} == {f"demo-{n:03d}" for n in range(1, 14)}
    assert {(row["status"], row["verdict"], row["epoch"]) for row in rows} == {("answered", "correct", 1)}
    assert all(row["duration_s"] > 0 and row["sandbox_start_s"] > 0 for row in rows)
    ours = ("--model", "oracle", "--domain", "demo", "--task-id", "demo-001", "--run-id", "ours")
    code = main([*ours, "--results-dir", str(tmp_path), *DEMO])
    assert code == 0
    out = tmp_path / "report"
    assert main(["report", str(tmp_path / "harbor-oracle"), str(tmp_path / "ours"), "--out", str(out)]) == 0
    capsys.readouterr()
    table = {(row["model"], row["domain"]): row for row in csv.DictReader((out / "accuracy.csv").open())}
    assert table[("harbor:oracle", "demo")]["n"] == "13" and table[("harbor:oracle", "demo")]["correct_default"] == "13"
    assert table[("oracle", "demo")]["n"] == "1"
    assert "only harbor:oracle" in (out / "report.md").read_text()  # the paired comparison of the two


def test_an_agents_trials_keep_their_trajectory_tokens_cost_epochs_and_status(tmp_path):
    rows = {row["epoch"]: row for row in _import("agent", tmp_path, "harbor-agent")}
    wrong, late = rows[1], rows[2]  # epochs by start: the wrong answer started first
    assert (wrong["status"], wrong["verdict"], wrong["answer"]) == ("answered", "wrong_value", "38.000%")
    assert (wrong["input_tokens"], wrong["cached_tokens"], wrong["output_tokens"]) == (1200, 1400, 70)
    assert wrong["cost_usd"] == pytest.approx(0.0043) and wrong["turns"] == 2
    assert (wrong["duration_s"], wrong["sandbox_start_s"]) == (12.5, 4.0)
    assert (late["status"], late["verdict"]) == ("time_limit", "no_answer")
    assert late["detail"].startswith("Harbor AgentTimeoutError: Agent execution timed out after 1800.0 seconds")
    events = read_trajectory(tmp_path / "harbor-agent" / "episodes" / "demo" / "demo-001.jsonl")
    kinds = [event["event"] for event in events]
    assert kinds[:5] == ["episode_start", "sandbox_ready", "model_call", "action", "observation"]
    [action] = [event for event in events if event["event"] == "action"]
    assert action["command"].startswith("grep 1979 documents/statsmodels-macrodata")
    calls = [event for event in events if event["event"] == "model_call"]
    assert [call["response"]["usage"]["input_tokens"] for call in calls] == [1000, 200]
    assert calls[0]["messages"][0]["content"].startswith("By what percentage")
    assert calls[1]["messages"] == [{"role": "tool", "content": "| 1979 | Q4 | ..."}]


def test_a_trial_that_names_no_task_of_ours_is_listed_and_nothing_else_is_imported(tmp_path, capsys):
    other = tmp_path / "tasks"
    other.mkdir()
    (other / "misc.jsonl").write_text('{"id": "m1", "domain": "misc", "question": "Q?", "answer": "7"}\n')
    places = ("--results-dir", str(tmp_path), "--tasks-dir", str(other))
    code = main(["import", "harbor", str(JOBS / "agent"), "--run-id", "x", *places])
    assert code == 2 and not (tmp_path / "x").exists()
    assert "no trial matched a task" in capsys.readouterr().err


def test_a_malformed_trajectory_is_one_line_naming_its_file_and_field_and_nothing_is_written(tmp_path, capsys):
    job = tmp_path / "job"
    shutil.copytree(JOBS / "agent", job)
    trajectory = job / "demo__demo-001__wrong01" / "agent" / "trajectory.json"
    data = json.loads(trajectory.read_text())
    data["steps"][1]["metrics"]["prompt_tokens"] = "many"
    trajectory.write_text(json.dumps(data))
    code = main(["import", "harbor", str(job), "--run-id", "x", "--results-dir", str(tmp_path), *DEMO])
    [line] = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and not (tmp_path / "x").exists()
    assert str(trajectory) in line and "field 'steps[1].metrics.prompt_tokens': 'many' is not a count" in line


def test_trials_of_a_task_whose_name_harbor_cut_short_are_its_epochs(tmp_path):
    """Harbor names a trial's folder after the first 32 characters of its task's name: two trials of a task with a
    longer id are still two epochs of it, not one imported twice."""
    long_id = "demo-001-with-an-id-longer-than-harbor-keeps"
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    demo = json.loads((REPO / "tasks" / "demo.jsonl").read_text().splitlines()[0])
    (tasks / "demo.jsonl").write_text(json.dumps(demo | {"id": long_id}) + "\n")
    job = tmp_path / "job"
    job.mkdir()
    for trial in ("wrong01", "late002"):
        name = f"{f'demo__{long_id}'[:32].rstrip('_-')}__{trial}"
        folder = job / name
        shutil.copytree(JOBS / "agent" / f"demo__demo-001__{trial}", folder)
        result = json.loads((folder / "result.json").read_text())
        (folder / "result.json").write_text(json.dumps(result | {"task_name": f"demo__{long_id}", "trial_name": name}))
    places = ("--tasks-dir", str(tasks), "--collections-dir", str(REPO / "collections"))
    assert main(["import", "harbor", str(job), "--run-id", "x", "--results-dir", str(tmp_path), *places]) == 0
    rows = read_jsonl(tmp_path / "x" / "results.jsonl")
    assert sorted((row["task_id"], row["epoch"], row["verdict"]) for row in rows) == [
        (long_id, 1, "wrong_value"),
        (long_id, 2, "no_answer"),
    ]
