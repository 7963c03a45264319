"""Batches: resume after kill -9, retries of infrastructure failures only, shards, spend cap, bounds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from harness.inputs.tasks import Task, shard_tasks
from harness.models.base import ModelReply, action_reply
from harness.records.results import drop_torn_tail
from harness.records.trajectory import read_jsonl
from harness.sandboxes.base import ExecResult
from tests.conftest import REPO
from tests.helpers.openai_server import reply

SLOW_EPISODE = [{"bash": "sleep 0.6"}, "<answer>42</answer>"]
COMPARED = ("task_id", "domain", "status", "answer", "verdict", "verdict_strict", "verdict_lenient", "turns")


def rows_of(path):
    """results.jsonl as written (raw dicts; a torn last line ignored)."""
    return read_jsonl(path) if path.exists() else []


def many_tasks(mini, count: int) -> list[str]:
    ids = [f"t{i:02d}" for i in range(count)]
    task = {"domain": "mini", "question": "Q?", "answer": "42"}
    (mini.tasks_dir / "mini.jsonl").write_text("".join(json.dumps({"id": i, **task}) + "\n" for i in ids))
    return ids


def command(mini, script: str, run_id: str, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "harness",
        "--model",
        script,
        "--domain",
        "mini",
        *mini.folder_arguments(run_id),
        *extra,
    ]


def comparable(rows: list[dict]) -> list[tuple]:
    return sorted(tuple(row[key] for key in COMPARED) for row in rows)


def test_resume_after_kill_9_loses_and_repeats_nothing(mini):
    ids = many_tasks(mini, 10)
    script = mini.script(SLOW_EPISODE)
    results = mini.results_dir / "killed" / "results.jsonl"
    process = subprocess.Popen(
        command(mini, script, "killed", "--workers", "2"),
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(rows_of(results)) < 3:
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    before_kill = results.read_text().splitlines(keepends=True)
    finished_before = {json.loads(line)["task_id"] for line in before_kill if line.endswith("\n")}
    assert 3 <= len(finished_before) < len(ids)

    resumed = subprocess.run(
        command(mini, script, "killed", "--workers", "2"), cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert resumed.returncode == 0, resumed.stderr
    after = results.read_text().splitlines(keepends=True)
    assert after[: len([line for line in before_kill if line.endswith("\n")])] == [
        line for line in before_kill if line.endswith("\n")
    ]  # nothing finished was rewritten or lost
    rows = rows_of(results)
    assert sorted(row["task_id"] for row in rows) == ids  # every task exactly once: no repeats
    uninterrupted = subprocess.run(
        command(mini, script, "whole", "--workers", "2"), cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert uninterrupted.returncode == 0
    assert comparable(rows) == comparable(rows_of(mini.results_dir / "whole" / "results.jsonl"))
    for task_id in ids:
        events = (mini.results_dir / "killed" / "episodes" / "mini" / f"{task_id}.jsonl").read_text().splitlines()
        assert json.loads(events[-1])["event"] == "episode_end"


def test_resume_reruns_infrastructure_failures_and_keeps_everything_else(mini):
    many_tasks(mini, 3)
    script = mini.script(["<answer>42</answer>"])
    outcome = mini.run("--model", script, run_id="mixed")
    rows = outcome.rows
    rows[0]["status"], rows[1]["status"] = "model_error", "turn_limit"
    (outcome.run_dir / "results.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    resumed = mini.run("--model", script, run_id="mixed")
    assert [row["task_id"] for row in resumed.rows] == ["t00", "t01", "t02", "t00"]
    assert resumed.rows[-1]["status"] == "answered"
    assert (outcome.run_dir / "episodes" / "mini" / "previous" / "t00.1.jsonl").exists()
    redone = mini.run("--model", script, "--redo", run_id="mixed")
    assert len(redone.rows) == 7


def test_resume_with_a_changed_protocol_needs_the_flag(mini):
    script = mini.script(["<answer>42</answer>"])
    mini.run("--model", script, run_id="p")
    assert mini.run("--model", script, "--time-limit", "60", run_id="p").exit_code == 2
    allowed = mini.run("--model", script, "--time-limit", "60", "--allow-protocol-change", "--redo", run_id="p")
    assert allowed.exit_code == 0 and len(allowed.rows) == 2


def test_torn_last_row_is_dropped_before_appending(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text('{"task_id": "a", "domain": "d"}\n{"task_id": "b", "dom')
    assert [row["task_id"] for row in rows_of(path)] == ["a"]
    drop_torn_tail(path)
    assert path.read_text() == '{"task_id": "a", "domain": "d"}\n'


def test_shards_split_the_task_list_deterministically():
    tasks = [Task(id=f"q{i}", domain=d, question="?", answer="1") for d in ("law", "med") for i in range(50)]
    parts = [shard_tasks(tasks, f"{i}/3") for i in (1, 2, 3)]
    assert sorted(t.id + t.domain for part in parts for t in part) == sorted(t.id + t.domain for t in tasks)
    assert all(parts) and parts[0] == shard_tasks(list(reversed(tasks)), "1/3")[::-1]


def test_bad_shard_is_an_input_error(mini):
    outcome = mini.run("--model", "oracle", "--shard", "4/3")
    assert outcome.exit_code == 2 and "--shard" in outcome.output


def test_spend_cap_stops_starting_new_episodes(mini, openai_server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    many_tasks(mini, 3)
    openai_server.push(*[reply("<answer>42</answer>", prompt_tokens=100000) for _ in range(3)])
    outcome = mini.run("--model", "openai/gpt-5", "--api-base", openai_server.url, "--max-cost", "0.01")
    assert len(outcome.rows) == 1 and outcome.rows[0]["cost_usd"] > 0.01
    assert "--max-cost" in outcome.output and "2 episodes not started" in outcome.output


class CountingSandbox:
    active = 0
    peak = 0
    lock = threading.Lock()

    def start(self) -> None:
        with self.lock:
            CountingSandbox.active += 1
            CountingSandbox.peak = max(CountingSandbox.peak, CountingSandbox.active)

    def execute(self, command, timeout_s):
        time.sleep(0.05)
        return ExecResult("ok\n", "", 0, False, False, 3, 0.05)

    def describe(self):
        return {}

    def close(self) -> None:
        with self.lock:
            CountingSandbox.active -= 1


class SlowModel:
    """Two replies (a command, then the answer), each taking `delay_s`."""

    name, context_window = "slow", None
    active = 0
    peak = 0
    lock = threading.Lock()
    delay_s = 0.1

    def __init__(self):
        self.calls = 0

    def count_tokens(self, messages):
        return 1

    def query(self, messages, timeout_s):
        with self.lock:
            SlowModel.active += 1
            SlowModel.peak = max(SlowModel.peak, SlowModel.active)
        time.sleep(self.delay_s)
        with self.lock:
            SlowModel.active -= 1
        self.calls += 1
        if self.calls == 1:
            return action_reply("", "echo ok", "toolcall", "call_1")
        return ModelReply(text="<answer>42</answer>")


def run_fake_batch(tmp_path, count: int, workers: int, sandboxes: int, connections: int, **settings):
    from rich.console import Console

    from harness.episode import EpisodeContext
    from harness.episode.settings import EpisodeSettings
    from harness.episode.solvers.registry import make_solver
    from harness.inputs.config import RunConfig
    from harness.inputs.prompts import load_prompts
    from harness.records.episode_log import RunFacts
    from harness.records.results import ResultsWriter
    from harness.run.executors.batch import Batch, BatchLimits, BatchState
    from harness.run.executors.threads import run_batch

    tasks = [Task(id=f"t{i}", domain="mini", question="Q?", answer="42") for i in range(count)]
    config = RunConfig(model="slow", domain="mini", **settings)
    context = EpisodeContext(
        settings=EpisodeSettings.of(config, 4096, make_solver("bash-agent", {})),
        prompts=load_prompts(),
        make_model=lambda task: SlowModel(),
        make_sandbox=lambda task, name: CountingSandbox(),
        run_dir=tmp_path / f"run-{connections}",
        run_facts=RunFacts(),
        collection_hashes={},
        cancel=threading.Event(),
    )
    context.run_dir.mkdir()
    writer = ResultsWriter(context.run_dir / "results.jsonl")
    limits = BatchLimits(workers=workers, max_sandboxes=sandboxes, max_connections=connections, max_cost_usd=None)
    batch = Batch(tasks, context, limits, writer, Console(quiet=True), "t", BatchState(), "test", config)
    results, interrupted = run_batch(batch)
    writer.close()
    assert not interrupted
    return results


@pytest.mark.parametrize("slots", [1, 2])
def test_sandbox_and_connection_bounds_hold_under_more_workers(tmp_path, slots):
    CountingSandbox.peak = SlowModel.peak = 0
    results = run_fake_batch(tmp_path, 6, workers=6, sandboxes=slots, connections=slots)
    assert len(results) == 6
    assert CountingSandbox.peak == slots and SlowModel.peak == slots


def test_waiting_for_our_own_slots_is_not_the_agents_time(tmp_path):
    """Each episode's agent needs ~0.3 s of its 1.5 s; one connection slot shared by 8 workers means waits of
    up to ~4 s. Statuses must be those of a batch with plenty of slots; the waits are recorded apart."""
    SlowModel.delay_s = 0.25
    try:
        plenty = run_fake_batch(tmp_path, 8, workers=8, sandboxes=8, connections=8, time_limit=1.5)
        throttled = run_fake_batch(tmp_path, 8, workers=8, sandboxes=8, connections=1, time_limit=1.5)
    finally:
        SlowModel.delay_s = 0.1
    assert sorted(r.status for r in throttled) == sorted(r.status for r in plenty) == ["answered"] * 8
    assert max(r.queue_s for r in throttled) > 1.5 > max(r.duration_s for r in throttled)
    assert all(r.sandbox_start_s >= 0 for r in throttled)


def test_the_live_token_count_has_each_call_as_it_returns_before_its_episode_ends():
    from harness.core.reply import Usage
    from harness.run.executors.batch import BatchState
    from harness.run.executors.threads import _counting_calls

    class Answering:
        name, context_window = "fake", None

        def query(self, messages, timeout_s):
            return ModelReply(text="thinking", usage=Usage(input_tokens=1000, output_tokens=234))

    state = BatchState(kept_tokens=5)  # a resume kept episodes of 5 tokens
    model = _counting_calls(lambda task: Answering(), state)(None)
    model.query([], 1.0)
    assert state.counts()["tokens"] == "1,239" and model.name == "fake"
