"""Replay of logged trajectories: exact re-execution, detection of differences, and re-grading."""

from __future__ import annotations

import json
import re

from harness.cli.main import main
from harness.grading import numeric
from harness.records.trajectory import read_trajectory

COMMANDS = [
    {"bash": "ls documents"},
    {"text": "Reading the ledger.", "bash": "cat documents/ledger.md; echo to-stderr >&2"},
    {"bash": "grep 2099 documents/ledger.md"},
    {"bash": "seq 1 50000 | tail -3"},
    "Total: <answer>approximately 42</answer>",
]


def observations(outcome_dir, task_id="t1"):
    path = outcome_dir / "episodes" / "mini" / f"{task_id}.jsonl"
    events = read_trajectory(path)
    return [(e["exit_code"], e["stdout"], e["stderr"]) for e in events if e["event"] == "observation"]


def replay(mini, *arguments: str) -> tuple[int, str]:
    code = main(["replay", *arguments])
    captured = mini.capsys.readouterr()
    return code, captured.out + captured.err


def test_replaying_a_scripted_run_reproduces_every_observation(mini):
    original = mini.run("--model", mini.script(COMMANDS))
    code, output = replay(mini, str(original.run_dir))
    assert code == 0, output
    assert "1 reproduced exactly, 0 differ" in output
    [replayed_dir] = [p for p in (original.run_dir / "replays").iterdir() if ".replay-" in p.name]
    assert observations(replayed_dir) == observations(original.run_dir)
    assert [exit_code for exit_code, _, _ in observations(original.run_dir)] == [0, 0, 1, 0]


def test_replaying_an_oracle_run_reproduces_it(mini):
    original = mini.run("--model", "oracle")
    code, output = replay(mini, str(original.run_dir / "episodes" / "mini" / "t1.jsonl"))
    assert code == 0 and "matches mini/t1" in output


def test_replay_reports_a_changed_observation(mini):
    original = mini.run("--model", mini.script(COMMANDS))
    (mini.root / "collections" / "mini" / "ledger.md").write_text("| 2020 | 41 |\n")
    code, output = replay(mini, str(original.run_dir))
    assert code == 1
    assert "differs mini/t1: observation 2: stdout" in output
    assert "0 reproduced exactly, 1 differ" in output


def test_a_replay_of_an_episode_that_waited_for_retries_has_no_negative_time(mini):
    """The logged run waited 30 s of backoff after a refused attempt; the replay makes no call and waits for none,
    so none of it comes off its clock (its rows held -30 s)."""
    original = mini.run("--model", mini.script(COMMANDS))
    path = original.run_dir / "episodes" / "mini" / "t1.jsonl"
    events = [json.loads(line) for line in path.read_text().splitlines()]
    attempt = {"error": "RateLimitError", "status": 429, "message": "rate limited", "attempt": 1, "duration_s": 0.5}
    attempt |= {"wait_s": 30.0, "on_agent_clock": False}  # as models/retries.py writes an attempt
    for event in events:
        if event["event"] == "model_call":
            event["response"]["attempts"] = [attempt]
            event["response"]["queued_s"] = 12.0
    path.write_text("".join(json.dumps(event) + "\n" for event in events))
    code, output = replay(mini, str(original.run_dir))
    assert code == 0, output
    [replayed_dir] = [p for p in (original.run_dir / "replays").iterdir() if ".replay-" in p.name]
    [row] = [json.loads(line) for line in (replayed_dir / "results.jsonl").read_text().splitlines()]
    assert row["duration_s"] >= 0 and row["retry_wait_s"] == row["failed_attempts_s"] == 0
    assert re.search(r"-\d+(\.\d)?s", output) is None  # the end table's agent time


def test_replay_model_in_the_normal_command(mini):
    original = mini.run("--model", mini.script(COMMANDS), run_id="first")
    trajectory = original.run_dir / "episodes" / "mini" / "t1.jsonl"
    again = mini.run("--model", f"replay:{trajectory}", run_id="second")
    assert again.rows[0]["verdict"] == original.rows[0]["verdict"] == "correct"
    assert observations(again.run_dir) == observations(original.run_dir)


def test_regrade_counts_changed_verdicts_and_writes_a_new_results_file(mini, monkeypatch):
    original = mini.run("--model", mini.script(COMMANDS))
    assert original.rows[0]["verdict"] == "correct"  # HEDGE is tolerated by the default mode
    code, output = replay(mini, str(original.run_dir), "--regrade")
    assert code == 0 and "0 verdicts changed" in output
    strict_default = dict(numeric.TOLERATED_FLAGS, default=frozenset())
    monkeypatch.setattr(numeric, "TOLERATED_FLAGS", strict_default)
    code, output = replay(mini, str(original.run_dir), "--regrade")
    assert "1 verdicts changed" in output
    [row] = [json.loads(line) for line in (original.run_dir / "results.regraded.jsonl").read_text().splitlines()]
    assert (row["verdict"], row["verdict_lenient"], row["task_id"]) == ("format_violation", "correct", "t1")
    assert json.loads((original.run_dir / "results.jsonl").read_text())["verdict"] == "correct"


def test_replay_of_a_folder_without_trajectories_is_an_input_error(mini, tmp_path):
    code, output = replay(mini, str(tmp_path))
    assert code == 2 and "not a run folder (no run.yaml) nor a folder of run folders" in output


def test_a_torn_last_trajectory_line_is_ignored(tmp_path):
    from harness.records.trajectory import read_trajectory

    path = tmp_path / "t.jsonl"
    path.write_text('{"event": "episode_start"}\n{"event": "model_call"}')
    assert [event["event"] for event in read_trajectory(path)] == ["episode_start"]
