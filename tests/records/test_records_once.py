"""Each output stored once (schema 3): every call's messages rebuilt exactly, and schema 2 logs still read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.models.base import ModelReply
from harness.records.conversation import conversation
from harness.records.events import ModelCallEvent
from harness.records.reading import logged_events
from harness.records.trajectory import read_jsonl, read_trajectory
from tests.conftest import REPO
from tests.helpers.openai_server import reply

SCHEMA2_RUN = REPO / "tests" / "fixtures" / "schema2_run"
"""A run folder written by the schema 2 code (6d4d7cc) with tests/fixtures/schema2_run.script.yaml."""

LEDGER = "| year | units |\n|---|---|\n| 2020 | 40 |\n| 2021 | 2 |\n"
"""The fixture's one document (also the mini project's ledger)."""

VOLATILE = (
    "time",
    "schema_version",
    "sandbox",
    "model",
    "config_hash",
    "harness_version",
    "collection_hash",
    "run_id",
    "started_at",
    "finished_at",
)
"""With every `*_s` field (times): what differs between two runs of one episode."""


pytestmark = pytest.mark.usefixtures("openai_key")


@pytest.mark.parametrize("action_format", ["toolcall", "text"])
@pytest.mark.slow
def test_every_calls_messages_rebuilt_from_the_log_are_those_sent(mini, openai_server, action_format):
    def act(command: str) -> str:
        return f"Next.\n```bash\n{command}\n```" if action_format == "text" else ""

    commands = ["cat documents/ledger.md; echo 'a warning' >&2", "true", "echo $((6*7))XYZ; echo $((6*7))XYZ >&2"]
    steps = [reply(act(c) or None, bash=None if action_format == "text" else c) for c in commands]
    steps.insert(1, reply("No action in this reply."))
    openai_server.push(*steps, reply("<answer>42</answer>"))
    outcome = mini.run(
        "--model", "openai/test-model", "--api-base", openai_server.url, "--action-format", action_format
    )
    assert outcome.rows[0]["status"] == "answered", outcome.output
    rebuilt = messages_sent(outcome.trajectory("t1"))  # the log's conversation, each reply as the loop sends it
    sent = [request["messages"] for request in openai_server.requests]
    assert len(rebuilt) == len(sent) == 5
    assert rebuilt == sent


def messages_sent(lines):
    """Per model call (and a failed call, which ends the log), the whole conversation it sent."""
    sent, whole = [], []
    for call in conversation(logged_events(lines)).calls:
        whole += call.call.messages
        sent.append(list(whole))
        if isinstance(call.call, ModelCallEvent):
            whole.append(ModelReply.of(call.call.response).to_message())
    return sent


def test_an_output_is_stored_once(mini):
    model = mini.script([{"bash": "echo $((6*7))XYZ; echo $((7*6))ABC >&2"}, "<answer>42</answer>"])
    outcome = mini.run("--model", model)
    raw = (outcome.run_dir / "episodes" / "mini" / "t1.jsonl").read_text()
    assert raw.count("42XYZ") == 1 and raw.count("42ABC") == 1
    observation = next(e for e in outcome.trajectory("t1") if e["event"] == "observation")
    assert (observation["stdout"], observation["stderr"]) == ("42XYZ\n", "42ABC\n")
    assert "42XYZ" in observation["text"]


def test_a_log_stored_once_reads_as_the_schema_2_log_of_the_same_episode(mini, tmp_path):
    """The schema 2 fixture's episode run again now: read back, every event is what schema 2 wrote."""
    tasks = read_jsonl(SCHEMA2_RUN / "results.jsonl")
    mini.tasks_dir.joinpath("mini.jsonl").write_text(
        "".join(json.dumps(_task_line(SCHEMA2_RUN, row["task_id"])) + "\n" for row in tasks)
    )
    outcome = mini.run("--model", f"scripted:{REPO / 'tests' / 'fixtures' / 'schema2_run.script.yaml'}")
    assert outcome.exit_code == 0, outcome.output
    for row in tasks:
        old = read_trajectory(SCHEMA2_RUN / "episodes" / "mini" / f"{row['task_id']}.jsonl")
        new = outcome.trajectory(row["task_id"])
        # fields added since schema 2 (the row's epoch, ...) aside: every field it had, with its value
        assert len(new) == len(old)
        assert [_within(_stable(now), _stable(was)) for now, was in zip(new, old, strict=True)] == [
            _stable(was) for was in old
        ]
        assert new[0]["schema_version"] == 3 and old[0]["schema_version"] == 2


def _within(now: object, was: object) -> object:
    """NOW with only the fields WAS has, at every depth: fields added since schema 2 (a row's epoch, a reply's
    cache-write tokens) aside, every field schema 2 had must read back with its value."""
    if isinstance(now, dict) and isinstance(was, dict):
        return {key: _within(value, was[key]) for key, value in now.items() if key in was}
    if isinstance(now, list) and isinstance(was, list) and len(now) == len(was):
        return [_within(item, before) for item, before in zip(now, was, strict=True)]
    return now


def _task_line(run: Path, task_id: str) -> dict:
    start = read_jsonl(run / "episodes" / "mini" / f"{task_id}.jsonl")[0]
    task = {key: value for key, value in start["task"].items() if value is not None}
    return {"id": task_id, "domain": "mini", "solution": "true", **task}


def _stable(event: dict) -> dict:
    """An event without what differs between two runs of one episode (times, hashes, paths)."""
    kept = {key: value for key, value in event.items() if key not in VOLATILE and not key.endswith("_s")}
    if event["event"] == "model_call":
        kept["messages"] = [_without_paths(message) for message in event["messages"]]
    return kept


def _without_paths(message: dict) -> dict:
    return {key: value for key, value in message.items() if key != "content" or message["role"] != "system"}


def test_schema_2_logs_regrade_replay_report_and_view_unchanged(tmp_path, monkeypatch):
    run = tmp_path / "results" / "schema2_run"
    shutil.copytree(SCHEMA2_RUN, run)
    rows = read_jsonl(run / "results.jsonl")
    monkeypatch.chdir(tmp_path)  # the run recorded tasks/ and collections/ relative to where it ran
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "mini.jsonl").write_text(
        "".join(json.dumps(_task_line(run, row["task_id"])) + "\n" for row in rows)
    )
    (tmp_path / "collections" / "mini").mkdir(parents=True)
    (tmp_path / "collections" / "mini" / "ledger.md").write_text(LEDGER)
    assert main(["replay", "--regrade", str(run)]) == 0
    regraded = read_jsonl(run / "results.regraded.jsonl")
    graded = ("task_id", "answer", "verdict", "verdict_strict", "verdict_lenient", "status", "turns")
    assert [[r[k] for k in graded] for r in regraded] == [[r[k] for k in graded] for r in rows]
    assert main(["replay", str(run)]) == 0, "a re-execution differs from the schema 2 log"
    assert main(["report", str(run)]) == 0
    assert "mini" in (run / "report" / "report.md").read_text()
    assert main(["view", str(run), "--static", str(tmp_path / "site")]) == 0
    assert "a warning" in (tmp_path / "site" / "episodes" / "0.json").read_text()
