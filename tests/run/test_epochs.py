"""Epochs: each task run K times, an episode per (task, epoch); resume adds epochs, never repeats or loses one."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import time

import pytest

from harness.cli.main import main
from harness.records.trajectory import read_jsonl
from tests.conftest import REPO
from tests.helpers.openai_server import reply
from tests.interop.test_mini_swe_agent import import_args
from tests.run.test_batch import SLOW_EPISODE, command, many_tasks, rows_of

QUESTIONS = {"t1": "Units of the first ledger?", "t2": "Units of the second ledger?", "t3": "Units of the third?"}
CORRECT = {("t1", 1), ("t1", 2), ("t1", 3), ("t2", 2)}
"""The (task, epoch) pairs the model answers correctly; every other episode answers 41."""
SEED = 100


def three_tasks(mini) -> None:
    lines = [json.dumps({"id": i, "domain": "mini", "question": q, "answer": "42"}) for i, q in QUESTIONS.items()]
    (mini.tasks_dir / "mini.jsonl").write_text("\n".join(lines) + "\n")


def judge_by_seed(body: dict) -> object:
    """The task from the question asked, the epoch from the seed sent (seed + epoch - 1)."""
    text = json.dumps(body["messages"])
    [task_id] = [i for i, question in QUESTIONS.items() if question in text]
    epoch = body["seed"] - SEED + 1
    return reply("<answer>42</answer>" if (task_id, epoch) in CORRECT else "<answer>41</answer>")


def test_epochs_give_the_exact_pass_at_k_pass_hat_k_and_mean(mini, openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    three_tasks(mini)
    openai_server.respond = judge_by_seed
    outcome = mini.run(
        "--model",
        "openai/test-model",
        "--api-base",
        openai_server.url,
        "--model-arg",
        f"seed={SEED}",
        "--epochs",
        "3",
        "--workers",
        "3",
        run_id="epochs",
    )
    assert outcome.exit_code == 0, outcome.output
    assert {(row["task_id"], row["epoch"]): row["verdict"] == "correct" for row in outcome.rows} == {
        (task, epoch): (task, epoch) in CORRECT for task in QUESTIONS for epoch in (1, 2, 3)
    }
    assert sorted(request["seed"] for request in openai_server.requests) == [100] * 3 + [101] * 3 + [102] * 3
    episodes = outcome.run_dir / "episodes" / "mini"
    assert sorted(path.name for path in episodes.glob("t1*.jsonl")) == [
        "t1.jsonl",
        "t1~epoch2.jsonl",
        "t1~epoch3.jsonl",
    ]
    assert json.loads((episodes / "t2~epoch2.jsonl").read_text().splitlines()[0])["epoch"] == 2
    out = mini.root / "report"
    assert main(["report", str(outcome.run_dir), "--out", str(out)]) == 0
    mini.capsys.readouterr()
    by_k = {row["k"]: row for row in csv.DictReader((out / "pass_at_k.csv").open())}
    # by hand: pass@k per task is 1 - C(n-c, k)/C(n, k); t1 has 3 of 3, t2 1 of 3, t3 0 of 3
    assert float(by_k["1"]["pass_at_k"]) == pytest.approx((1 + 1 / 3 + 0) / 3, abs=1e-6)
    assert float(by_k["2"]["pass_at_k"]) == pytest.approx((1 + 2 / 3 + 0) / 3, abs=1e-6)
    assert float(by_k["3"]["pass_at_k"]) == pytest.approx(2 / 3, abs=1e-6)
    assert [float(by_k[k]["pass_hat_k"]) for k in "123"] == pytest.approx([4 / 9, 1 / 3, 1 / 3], abs=1e-6)
    [overall] = [row for row in csv.DictReader((out / "intervals.csv").open()) if row["domain"] == "all"]
    assert (overall["tasks"], overall["episodes"], float(overall["accuracy"])) == ("3", "9", pytest.approx(4 / 9))
    markdown = (out / "report.md").read_text()
    assert "| 3 | 44.4 | 55.6 | 66.7 | 44.4 | 33.3 | 33.3 | 33.3 |" in markdown  # verdicts change on t2 only
    run_yaml = (outcome.run_dir / "run.yaml").read_text()
    assert "seed_per_epoch: seed + epoch - 1" in run_yaml


def test_raising_epochs_on_resume_runs_only_the_new_epochs_and_lowering_is_refused(mini):
    many_tasks(mini, 2)
    script = mini.script(["<answer>42</answer>"])
    first = mini.run("--model", script, run_id="grow")
    assert [(row["task_id"], row["epoch"]) for row in first.rows] == [("t00", 1), ("t01", 1)]
    grown = mini.run("--model", script, "--epochs", "3", run_id="grow")
    assert grown.exit_code == 0, grown.output
    assert "2 of 6 episodes kept, 4 to run" in grown.output  # no protocol change
    assert grown.rows[:2] == first.rows
    assert sorted((row["task_id"], row["epoch"]) for row in grown.rows[2:]) == [
        ("t00", 2),
        ("t00", 3),
        ("t01", 2),
        ("t01", 3),
    ]
    again = mini.run("--model", script, "--epochs", "3", run_id="grow")
    assert "6 of 6 episodes kept, 0 to run" in again.output and again.rows == grown.rows
    before = (grown.run_dir / "results.jsonl").read_bytes(), (grown.run_dir / "run.yaml").read_bytes()
    lowered = mini.run("--model", script, "--epochs", "2", run_id="grow")
    assert lowered.exit_code == 2
    assert "--epochs 2: run grow was run with --epochs 3" in lowered.output
    assert ((grown.run_dir / "results.jsonl").read_bytes(), (grown.run_dir / "run.yaml").read_bytes()) == before


def test_kill_9_mid_epoch_then_resume_loses_and_repeats_nothing(mini):
    ids = many_tasks(mini, 4)
    script = mini.script(SLOW_EPISODE)
    results = mini.results_dir / "killed" / "results.jsonl"
    arguments = command(mini, script, "killed", "--workers", "2", "--epochs", "3")
    process = subprocess.Popen(
        arguments, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(rows_of(results)) < 3:
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    finished = [line for line in results.read_text().splitlines(keepends=True) if line.endswith("\n")]
    assert 3 <= len(finished) < 12
    resumed = subprocess.run(arguments, cwd=REPO, capture_output=True, text=True, timeout=180)
    assert resumed.returncode == 0, resumed.stderr
    assert results.read_text().splitlines(keepends=True)[: len(finished)] == finished
    rows = rows_of(results)
    assert sorted((row["task_id"], row["epoch"]) for row in rows) == [(i, e) for i in ids for e in (1, 2, 3)]
    for path in (mini.results_dir / "killed" / "episodes" / "mini").glob("*.jsonl"):
        assert json.loads(path.read_text().splitlines()[-1])["event"] == "episode_end"
    assert len(list((mini.results_dir / "killed" / "episodes" / "mini").glob("*.jsonl"))) == 12


def test_replay_regrade_and_export_import_keep_each_epoch(mini):
    many_tasks(mini, 1)
    outcome = mini.run("--model", mini.script([{"bash": "echo 42"}, "<answer>42</answer>"]), "--epochs", "2")
    assert main(["replay", "--regrade", str(outcome.run_dir)]) == 0
    regraded = read_jsonl(outcome.run_dir / "results.regraded.jsonl")
    assert sorted(row["epoch"] for row in regraded) == [1, 2]
    assert main(["replay", str(outcome.run_dir)]) == 0
    output = mini.capsys.readouterr().out
    assert "matches mini/t00 epoch 2" in output and "2 reproduced exactly, 0 differ" in output
    out = mini.root / "exported"
    assert main(["export", "mini-swe-agent", str(outcome.run_dir), str(out)]) == 0
    assert sorted(p.name for p in (out / "mini").iterdir()) == ["t00.traj.json", "t00~epoch2.traj.json"]
    assert main(import_args(mini, "back", out)) == 0
    back = read_jsonl(mini.results_dir / "back" / "results.jsonl")
    assert sorted((row["task_id"], row["epoch"], row["verdict"]) for row in back) == [
        ("t00", 1, "correct"),
        ("t00", 2, "correct"),
    ]


def test_an_epoch_file_never_meets_another_tasks_file(tmp_path):
    from harness.records.run_folder import RunFolder

    folder = RunFolder(tmp_path)
    paths = {
        folder.trajectory_path("mini", task, epoch)
        for task in ("t1", "t1~epoch2", "t1~epoch2~epoch2")
        for epoch in (1, 2)
    }
    assert len(paths) == 6
    assert folder.trajectory_path("mini", "t1", 2).name == "t1~epoch2.jsonl"
