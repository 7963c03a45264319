"""What a run records holds under failures of ours: every started episode ends with a row, the logs can be
replayed and re-graded, resumes notice changed tasks, graders and collections, and one runner owns a folder."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from harness.cli.main import main
from harness.records.results import read_rows
from harness.sandboxes.base import SandboxError
from tests.conftest import REPO
from tests.run.test_batch import many_tasks


def broken_backend(monkeypatch, *, start=None, close=None):
    """Make every local sandbox fail in `start` or `close` with the given exception."""
    from harness.sandboxes.local import sandbox as local

    original_start, original_close = local.BubblewrapSandbox.start, local.BubblewrapSandbox.close

    def failing_start(self):
        if start is not None and self._episode_name not in ("check", "tool-check"):
            raise start
        original_start(self)

    def failing_close(self):
        original_close(self)
        if close is not None and self._episode_name not in ("check", "tool-check"):
            raise close

    monkeypatch.setattr(local.BubblewrapSandbox, "start", failing_start)
    monkeypatch.setattr(local.BubblewrapSandbox, "close", failing_close)


def test_a_bug_in_cleanup_keeps_the_agents_outcome_and_every_row(mini, monkeypatch):
    many_tasks(mini, 4)
    broken_backend(monkeypatch, close=RecursionError("maximum recursion depth exceeded"))
    outcome = mini.run("--model", mini.script(["<answer>42</answer>"]), "--workers", "2")
    assert outcome.exit_code == 0
    assert sorted((r["task_id"], r["status"], r["verdict"]) for r in outcome.rows) == [
        (f"t0{i}", "answered", "correct") for i in range(4)
    ]
    assert all("sandbox cleanup failed: RecursionError" in r["detail"] for r in outcome.rows)
    events = [e["event"] for e in outcome.trajectory("t00")]
    assert events[-3:] == ["harness_error", "evidence", "episode_end"]
    assert (outcome.run_dir / "summary.json").exists()


def test_an_unexpected_exception_is_a_harness_error_row_with_its_traceback(mini, monkeypatch):
    many_tasks(mini, 3)
    from harness.episode.solvers import BashAgent

    def broken_solve(*arguments, **keywords):
        raise KeyError("a bug of ours")

    monkeypatch.setattr(BashAgent, "solve", broken_solve)
    script = mini.script(["<answer>42</answer>"])
    outcome = mini.run("--model", script, "--workers", "2")
    assert outcome.exit_code == 1  # a bug of ours: a failure
    assert [r["status"] for r in outcome.rows] == ["harness_error"] * 3
    assert all("Traceback" in r["detail"] and "a bug of ours" in r["detail"] for r in outcome.rows)
    summary = json.loads((outcome.run_dir / "summary.json").read_text())
    assert summary["domains"][0]["statuses"] == {"harness_error": 3}
    monkeypatch.undo()
    resumed = mini.run("--model", script)
    assert "0 of 3 episodes kept, 3 to run" in resumed.output
    assert [r["status"] for r in resumed.rows[3:]] == ["answered"] * 3


def test_a_sandbox_that_fails_to_start_still_logs_a_start_and_can_be_regraded_and_skipped_by_replay(mini, monkeypatch):
    many_tasks(mini, 2)
    script = mini.script(["<answer>42</answer>"])
    good = mini.run("--model", script, "--task-id", "t00")
    broken_backend(monkeypatch, start=SandboxError("no room for a sandbox"))
    bad = mini.run("--model", script, "--task-id", "t01")
    assert [r["status"] for r in bad.rows] == ["answered", "sandbox_error"]
    events = bad.trajectory("t01")
    assert [e["event"] for e in events] == ["episode_start", "episode_end"]
    assert events[0]["task"]["answer"] == "42"
    monkeypatch.undo()
    assert main(["replay", str(good.run_dir), "--regrade"]) == 0
    assert main(["replay", str(good.run_dir)]) == 0
    output = mini.capsys.readouterr().out
    assert "skipped 1 episodes whose sandbox never started" in output and "1 reproduced exactly" in output


def test_results_that_cannot_be_written_stop_the_batch_cleanly(mini, monkeypatch):
    many_tasks(mini, 6)
    from harness.records.results import ResultsWriter

    original = ResultsWriter.append
    written = []

    def disk_fills_up(self, row):
        if len(written) == 2:
            raise OSError(28, "No space left on device")
        written.append(row.task_id)
        original(self, row)

    monkeypatch.setattr(ResultsWriter, "append", disk_fills_up)
    outcome = mini.run("--model", mini.script([{"bash": "sleep 0.2"}, "<answer>42</answer>"]), "--workers", "2")
    assert outcome.exit_code == 1
    assert "No space left on device" in outcome.output
    assert [r["task_id"] for r in outcome.rows] == written
    summary = json.loads((outcome.run_dir / "summary.json").read_text())
    assert summary["domains"][0]["tasks"] == 2 and summary["domains"][0]["pending"] == 4


def test_a_full_disk_under_results_is_one_line_not_a_traceback(mini, monkeypatch):
    """Every write of results.jsonl goes to /dev/full after two rows: the row's bytes stay in the file's buffer, so
    closing the file meets the full disk again (it was a double traceback of 40 lines around the one useful line)."""
    many_tasks(mini, 6)
    from harness.records.results import ResultsWriter

    original = ResultsWriter.append

    def disk_fills_up(self, row):
        if len(read_rows(self.path)) == 2 and self._file.name != "/dev/full":
            self._file.close()
            self._file = open("/dev/full", "a", encoding="utf-8")  # noqa: SIM115 - the writer closes it
        original(self, row)

    monkeypatch.setattr(ResultsWriter, "append", disk_fills_up)
    outcome = mini.run("--model", mini.script(["<answer>42</answer>"]), "--workers", "1")
    assert outcome.exit_code == 1
    assert "Traceback" not in outcome.output
    [line] = [line for line in outcome.output.splitlines() if line.startswith("error:")]
    assert line.endswith("results.jsonl: [Errno 28] No space left on device; the rows written so far are kept")
    assert len(outcome.rows) == 2


def test_the_observation_text_the_model_saw_is_logged_even_for_the_last_one(mini):
    outcome = mini.run("--model", mini.script([{"bash": "echo hi"}]), "--max-turns", "1")
    [observation] = [e for e in outcome.trajectory("t1") if e["event"] == "observation"]
    assert outcome.rows[0]["status"] == "turn_limit"
    assert "hi" in observation["text"] and "exit code" in observation["text"].lower()


def test_the_protocol_records_every_grader_in_use_and_a_resume_refuses_a_changed_one(mini, monkeypatch):
    task = {"id": "c1", "domain": "mini", "question": "Which? (A) 40 (B) 42", "answer": "B", "grader": "choice"}
    with (mini.tasks_dir / "mini.jsonl").open("a") as tasks:
        tasks.write(json.dumps(task) + "\n")
    script = mini.script(["<answer>B</answer>"])
    first = mini.run("--model", script)
    graders = yaml.safe_load((first.run_dir / "run.yaml").read_text())["protocol"]["graders"]
    assert graders == {"choice": "choice-1.0", "numeric": "numeric-1.1"}
    from harness.grading import GRADERS

    monkeypatch.setattr(GRADERS["choice"], "version", "choice-2.0")
    refused = mini.run("--model", script)
    assert refused.exit_code == 2 and "choice-2.0" in refused.output


def test_a_resume_reruns_tasks_whose_question_or_gold_changed(mini):
    many_tasks(mini, 3)
    script = mini.script(["<answer>42</answer>"])
    mini.run("--model", script)
    lines = (mini.tasks_dir / "mini.jsonl").read_text().splitlines()
    lines[1] = lines[1].replace('"answer": "42"', '"answer": "41"')
    (mini.tasks_dir / "mini.jsonl").write_text("\n".join(lines) + "\n")
    resumed = mini.run("--model", script)
    assert "1 finished tasks changed" in resumed.output
    assert [(r["task_id"], r["verdict"]) for r in resumed.rows][-1] == ("t01", "wrong_value")
    assert len(resumed.rows) == 4


def test_a_resume_over_a_changed_collection_or_script_is_refused(mini):
    script = mini.script(["<answer>42</answer>"])
    mini.run("--model", script)
    (mini.root / "collections" / "mini" / "ledger.md").write_text("| year | units |\n|---|---|\n| 2020 | 41 |\n")
    refused = mini.run("--model", script)
    assert refused.exit_code == 2 and "collection mini" in refused.output
    mini.run("--model", script, "--allow-protocol-change")
    path = script.removeprefix("scripted:")
    with open(path, "a") as handle:
        handle.write("- more\n")
    refused = mini.run("--model", script)
    assert refused.exit_code == 2 and "model_digest" in refused.output


@pytest.mark.slow
def test_a_second_runner_on_the_same_run_folder_is_refused_naming_the_holder(mini):
    many_tasks(mini, 2)
    script = mini.root / "slow.yaml"
    script.write_text(yaml.safe_dump([{"bash": "sleep 5"}, "<answer>42</answer>"]))
    arguments = [
        "--model",
        f"scripted:{script}",
        "--domain",
        "mini",
        *mini.folder_arguments("shared"),
    ]
    first = subprocess.Popen(
        [sys.executable, "-m", "harness", *arguments], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        lock = mini.results_dir / "shared" / ".lock"
        for _ in range(200):
            if lock.exists() and lock.read_text().strip():
                break
            subprocess.run(["sleep", "0.05"])
        second = subprocess.run([sys.executable, "-m", "harness", *arguments], cwd=REPO, capture_output=True, text=True)
        assert second.returncode == 2
        assert f"in use by pid {first.pid}" in second.stderr
    finally:
        first.wait(timeout=60)
    rows = [json.loads(line) for line in (mini.results_dir / "shared" / "results.jsonl").read_text().splitlines()]
    assert sorted(r["task_id"] for r in rows) == ["t00", "t01"]
    assert main(["view", str(mini.results_dir / "shared"), "--static", str(mini.root / "site")]) == 0


@pytest.mark.parametrize("signal_name", ["SIGTERM"])
def test_after_sigterm_the_summary_shows_the_pending_tasks(mini, signal_name):
    import signal
    import time

    many_tasks(mini, 4)
    script = mini.root / "slow.yaml"
    script.write_text(yaml.safe_dump([{"bash": "sleep 30"}]))
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "harness",
            "--model",
            f"scripted:{script}",
            "--domain",
            "mini",
            "--workers",
            "1",
            *mini.folder_arguments("term"),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    trajectory = mini.results_dir / "term" / "episodes" / "mini" / "t00.jsonl"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (trajectory.exists() and '"action"' in trajectory.read_text()):
        time.sleep(0.05)
    process.send_signal(getattr(signal, signal_name))
    process.communicate(timeout=30)
    assert process.returncode == 130
    [domain] = json.loads((mini.results_dir / "term" / "summary.json").read_text())["domains"]
    assert (domain["tasks"], domain["pending"], domain["statuses"]) == (1, 3, {"cancelled": 1})


def test_an_events_line_keeps_the_keys_and_order_old_runs_have_and_leaves_out_what_it_lacks(tmp_path):
    from harness.records.events import ActionEvent, EpisodeStartEvent
    from harness.records.trajectory import TrajectoryWriter, read_trajectory

    log = TrajectoryWriter(tmp_path / "t.jsonl")
    start = dict(
        task_id="t1", domain="mini", task={"answer": "42", "grader": "numeric"}, task_digest="sha256:1", model="oracle"
    )
    log.write(EpisodeStartEvent(**start, sandbox={}, collection_hash="sha256:2", config_hash="sha256:3"))
    log.write(EpisodeStartEvent(**start, imported_from="t1.traj.json"))
    log.write(ActionEvent(turn=1, command="ls", timeout_s=600.0))
    log.write(ActionEvent(turn=1, command="ls"))
    log.close()
    ran, imported, action, imported_action = [list(event) for event in read_trajectory(log.path)]
    assert ran == [
        "event",
        "time",
        "schema_version",
        "task_id",
        "domain",
        "task",
        "task_digest",
        "model",
        "sandbox",
        "collection_hash",
        "config_hash",
    ]
    assert imported == [
        "event",
        "time",
        "schema_version",
        "task_id",
        "domain",
        "task",
        "task_digest",
        "model",
        "imported_from",
    ]
    assert (action, imported_action) == (
        ["event", "time", "turn", "command", "timeout_s"],
        ["event", "time", "turn", "command"],
    )


def test_episode_end_is_the_row_and_its_submission_and_says_regraded_only_when_it_was(mini):
    from harness.records.events import EpisodeEndEvent
    from harness.records.results import ResultRow

    [logged] = mini.run("--model", "oracle").rows
    row = ResultRow.from_dict(logged)
    assert EpisodeEndEvent(row=row, submission="<answer>42</answer>").to_dict() == logged | {
        "submission": "<answer>42</answer>"
    }
    assert list(EpisodeEndEvent(row=row, submission=None, regraded=True).to_dict())[-2:] == ["submission", "regraded"]


def test_run_yaml_reads_back_key_for_key_for_a_resumed_run_and_an_import(mini):
    from harness.records.run_record import RunRecord

    script = mini.script(["<answer>42</answer>"])
    mini.run("--model", script)
    resumed = yaml.safe_load((mini.run("--model", script, "--redo").run_dir / "run.yaml").read_text())
    assert resumed["resumed"][0]["pending"] == 1
    imported = {
        "run_id": "back",
        "created": "2026-01-02T03:04:05+00:00",
        "imported": {"format": "mini-swe-agent-1.1", "from": ["exported"]},
        "config": {"model": "m", "max_turns": 5, "time_limit": 0.0, "tasks_dir": "tasks"},
        "tasks": 2,
    }
    for record in (resumed, imported):
        again = RunRecord.from_dict(record).to_dict()
        assert (again, list(again)) == (record, list(record))


def test_a_run_yaml_of_the_first_shape_still_reports_replays_and_resumes(mini):
    script = mini.script([{"bash": "cat documents/ledger.md"}, "<answer>42</answer>"])
    path = mini.run("--model", script).run_dir / "run.yaml"
    today = yaml.safe_load(path.read_text())
    # As the first runner wrote it: no model section, no leakage warning, fewer settings (and one since removed).
    config = {key: value for key, value in today["config"].items() if key not in ("max_retries", "watch_opens")}
    first = (
        {key: today[key] for key in ("run_id", "created", "harness_version", "python")}
        | {"config": config | {"a_setting_since_removed": 1}}
        | {key: today[key] for key in ("config_hash", "protocol", "sandbox", "collections", "tasks")}
    )
    path.write_text(yaml.safe_dump(first, sort_keys=False))
    assert main(["report", str(path.parent), "--out", str(mini.root / "report")]) == 0
    assert main(["view", str(path.parent), "--static", str(mini.root / "site")]) == 0
    assert main(["replay", "--regrade", str(path.parent)]) == 0
    assert main(["replay", str(path.parent)]) == 0  # the removed setting left out, the missing ones at their defaults
    assert "1 reproduced exactly" in mini.capsys.readouterr().out
    assert "1 of 1 episodes kept" in mini.run("--model", script).output
    after = yaml.safe_load(path.read_text())
    assert list(after) == [*first, "leakage_warning", "resumed"]
    assert {key: after[key] for key in first} == first and after["leakage_warning"] is None


def test_a_run_yaml_that_is_not_a_run_record_is_an_input_error_naming_it(mini):
    path = mini.run("--model", "oracle").run_dir / "run.yaml"
    path.write_text(yaml.safe_dump({"created": "today"}))
    assert main(["view", str(path.parent), "--static", str(mini.root / "site")]) == 2
    assert "run.yaml: field 'run_id': missing" in mini.capsys.readouterr().err
