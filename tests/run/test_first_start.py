"""What a run's first start waits for: the leakage check runs beside the first episodes, and one sandbox is
started before them, not two."""

from __future__ import annotations

import json
import threading

import yaml

from harness.run import leak_check
from harness.run.leak_check import NOT_FINISHED
from harness.sandboxes.local.sandbox import BubblewrapSandbox

WARNING = "leakage check: 1 tasks have their gold, solution or id printed in their collection (mini/t1)"


def leaky(mini) -> None:
    row = {"id": "t1", "domain": "mini", "question": "Q?", "answer": "40"}  # the mini ledger prints 40
    (mini.tasks_dir / "mini.jsonl").write_text(json.dumps(row) + "\n")


def test_the_first_episode_starts_before_the_leakage_check_ends_and_the_record_gets_its_warning(mini, monkeypatch):
    leaky(mini)
    episode_started = threading.Event()
    start = BubblewrapSandbox.start

    def episode_sandbox(sandbox: BubblewrapSandbox) -> None:
        start(sandbox)
        if sandbox._episode_name != "check":
            episode_started.set()

    seen_while_checking = []
    check = leak_check.find_leaks_cached

    def slow_check(*arguments):
        assert episode_started.wait(60), "no episode started while the check ran"
        seen_while_checking.append(yaml.safe_load((mini.results_dir / "run" / "run.yaml").read_text()))
        return check(*arguments)

    monkeypatch.setattr(BubblewrapSandbox, "start", episode_sandbox)
    monkeypatch.setattr(leak_check, "find_leaks_cached", slow_check)
    outcome = mini.run("--model", mini.script(["<answer>40</answer>"]))
    assert outcome.exit_code == 0, outcome.output
    assert seen_while_checking[0]["leakage_warning"] == NOT_FINISHED  # said, not "no leak", while it ran
    assert yaml.safe_load((outcome.run_dir / "run.yaml").read_text())["leakage_warning"].startswith(WARNING)
    assert outcome.output.index(f"warning: {WARNING}") < outcome.output.index("results:")  # before the end


def test_a_failed_leakage_check_is_recorded_and_the_run_goes_on(mini, monkeypatch):
    def broken(*arguments):
        raise OSError("disk gone")

    monkeypatch.setattr(leak_check, "find_leaks_cached", broken)
    outcome = mini.run("--model", mini.script(["<answer>42</answer>"]))
    assert outcome.exit_code == 0 and outcome.rows[0]["status"] == "answered", outcome.output
    recorded = yaml.safe_load((outcome.run_dir / "run.yaml").read_text())["leakage_warning"]
    assert recorded.startswith("leakage check failed (OSError: disk gone)") and recorded in outcome.output


def test_runs_over_the_same_tasks_and_collections_share_one_check(mini, monkeypatch):
    leaky(mini)
    calls = []
    check = leak_check.find_leaks_cached
    monkeypatch.setattr(leak_check, "find_leaks_cached", lambda *arguments: calls.append(1) or check(*arguments))
    models = f"{mini.script(['<answer>40</answer>'])},{mini.script(['<answer>41</answer>'])}"
    outcome = mini.run("--model", models)  # a sweep of two models
    assert outcome.exit_code == 0, outcome.output
    assert len(calls) == 1 and outcome.output.count(f"warning: {WARNING}") == 1  # one check, the sweep told once
    records = [yaml.safe_load(path.read_text()) for path in outcome.run_dir.glob("*/run.yaml")]
    assert len(records) == 2 and all(WARNING in record["leakage_warning"] for record in records)  # each run's


def test_a_local_run_starts_one_sandbox_before_its_first_episode(mini, monkeypatch):
    started = []
    start = BubblewrapSandbox.start

    def counted(sandbox: BubblewrapSandbox) -> None:
        started.append(sandbox._episode_name)
        start(sandbox)

    monkeypatch.setattr(BubblewrapSandbox, "start", counted)
    outcome = mini.run("--model", mini.script(["<answer>42</answer>"]))
    assert outcome.exit_code == 0, outcome.output
    assert started == ["check", "mini-t1"]  # the bwrap check ran the tool probe too
    assert "rg" in yaml.safe_load((outcome.run_dir / "run.yaml").read_text())["sandbox"]["tools"]
