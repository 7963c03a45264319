"""Claude Code as an installed agent (`--solver claude-code`): its own binary, the pinned npm release
(`HARNESS_CLAUDE_CODE`, installed by .ci/run), in real bubblewrap sandboxes, its model calls (Anthropic's Messages
API) through the runner's proxy on the sandbox's unix socket (`ANTHROPIC_UNIX_SOCKET`) to the run's model, here
litellm over real HTTP to the loopback OpenAI server, scripted with bash tool calls. One run of two tasks (each a
sandbox, side by side) on each backend serves the tests: t1 explores, looks around its sandbox and answers; t2
never answers."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from harness.analysis.agent_transcript import transcript_view
from harness.core.status import Status
from harness.episode.solvers.claude_code import ClaudeCode
from harness.records.events import AgentTranscriptEvent
from harness.records.reading import event_of
from harness.records.trajectory import TrajectoryWriter
from harness.sandboxes.base import ExecResult
from tests.helpers.installed_agents import StillRunningSandbox, episode_in, probe_output, run_on_backend, scripted_agent
from tests.helpers.openai_server import reply

KEY = "sk-h50i-never-in-the-sandbox"
PROBE = (  # the key named in two halves: the agent keeps a record of its commands in its home
    f"key={KEY[:8]}; key=${{key}}{KEY[8:]}; env | grep -c $key; grep -rls $key /tmp /workspace /run /etc | wc -l; "
    "ls -A /run/model; touch /run/agent/package.json /run/model/x 2>&1 | sed 's/.*: //' | tr -d ' '; "
    "python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_STREAM)' 2>&1 | tail -n 1"
)


scripted = scripted_agent(PROBE, reply("40 + 2 = 42.\n<answer>42</answer>"))
"""t1: read the ledger, look around the sandbox, answer 42 in its last message; t2: list the documents for ever."""


@pytest.fixture(scope="module", params=["local", "docker"])
def agent_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """The run (`--max-turns 3`, two workers) on each sandbox (Docker: the recipe's image, the host's install bound
    into it)."""
    assert os.environ.get("HARNESS_CLAUDE_CODE"), "Claude Code's pinned release is installed by .ci/run"
    return run_on_backend(request, tmp_path_factory, "claude-code", scripted, KEY)


def test_claude_code_answers_right_through_the_proxy(agent_run):
    row = agent_run.rows["t1"]
    assert (row["status"], row["verdict"], row["turns"]) == ("answered", "correct", 3)
    assert row["files_touched"] == 1  # the ledger it read, from the commands and outputs the proxy logged
    assert agent_run.record["agent"]["version"] == "2.1.337"


def test_its_own_transcript_holds_the_calls_the_proxy_recorded(agent_run):
    ours = [
        call
        for event in agent_run.events["t1"]
        if event["event"] == "model_call"
        for call in event["response"]["tool_calls"]
    ]
    [kept] = [event for event in agent_run.events["t1"] if event["event"] == "agent_transcript"]
    transcript = kept["transcript"]
    theirs = [
        block
        for event in transcript
        if event["type"] == "assistant"
        for block in event["message"]["content"]
        if block["type"] == "tool_use"
    ]
    assert [(call["id"], json.loads(call["arguments"])) for call in ours] == [
        (use["id"], use["input"]) for use in theirs
    ]
    assert [use["name"] for use in theirs] == ["Bash"] * 2
    assert transcript[-1]["type"] == "result" and transcript[-1]["subtype"] == "success"
    # as show and the viewer present it: the commands the proxy's calls asked for, under the agent's replies
    event = event_of(kept)
    assert isinstance(event, AgentTranscriptEvent)
    view = transcript_view(event)
    shown = [command for message in view.messages if message.role == "assistant" for command in message.commands]
    assert shown == [json.loads(call["arguments"])["command"] for call in ours]
    assert [message.role for message in view.messages].count("tool") == 2
    assert view.ending == "success" and view.raw is None and view.format == "stream-json"


def test_inside_its_sandbox_only_the_proxy_answers_and_the_key_is_nowhere(agent_run):
    probe = probe_output(agent_run.server)
    assert KEY not in probe
    said = probe.split()
    start = said.index("api.sock")
    assert said[start - 2 : start + 1] == ["0", "0", "api.sock"]  # no key; the socket, alone in its folder
    # neither the socket's folder nor the agent's install (the host's, shared by every episode) can be changed
    assert set(said[start + 1 : start + 3]) <= {"Permissiondenied", "Read-onlyfilesystem"}
    assert "Address family not supported" in probe  # no IP socket: no address of the host's loopback either
    assert f"Bearer {KEY}" in agent_run.server.authorizations  # the runner called the provider with it


def test_a_turn_budget_of_3_ends_the_agent_and_the_row_says_turn_limit(agent_run):
    row = agent_run.rows["t2"]
    assert (row["status"], row["turns"]) == ("turn_limit", 3)
    assert len([event for event in agent_run.events["t2"] if event["event"] == "model_call"]) == 3


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--sandbox", "e2b"], "--sandbox e2b"),
        (["--closed-book"], "--closed-book"),
        (["--action-format", "text"], "toolcall"),
    ],
)
def test_settings_claude_code_cannot_run_with_are_refused_before_anything_is_written(mini, flags, named):
    outcome = mini.run("--solver", "claude-code", "--model", mini.script(["<answer>42</answer>"]), *flags)
    assert outcome.exit_code == 2 and not outcome.run_dir.exists()
    assert "--solver claude-code:" in outcome.output and named in outcome.output


def test_an_install_that_is_not_the_pinned_release_is_refused_before_anything_is_written(mini, tmp_path, monkeypatch):
    (tmp_path / "package.json").write_text(
        json.dumps({"name": "@anthropic-ai/claude-code-linux-x64", "version": "2.1.336"})
    )
    (tmp_path / "claude").write_text("")
    monkeypatch.setenv("HARNESS_CLAUDE_CODE", str(tmp_path))
    outcome = mini.run("--solver", "claude-code", "--model", mini.script(["<answer>42</answer>"]))
    assert outcome.exit_code == 2 and not outcome.run_dir.exists()
    assert "HARNESS_CLAUDE_CODE" in outcome.output and "2.1.337" in outcome.output


def test_claude_code_still_running_at_the_time_limit_ends_as_time_limit(tmp_path):
    log = TrajectoryWriter(tmp_path / "episode.jsonl")
    outcome = ClaudeCode({}).solve(episode_in(StillRunningSandbox(), tmp_path, log))
    log.close()
    assert outcome.status is Status.TIME_LIMIT and outcome.submission is None


class EndedSandbox:
    """A sandbox whose agent exited, having written TRANSCRIPT."""

    def __init__(self, transcript: list[dict[str, Any]]):
        self.transcript = transcript

    def execute(self, command: str, timeout_s: float) -> ExecResult:
        return ExecResult("", "", 1, timed_out=False, truncated=False, raw_bytes=0, duration_s=1.0)

    def read_bytes(self, path: str, max_bytes: int, timeout_s: float) -> bytes:
        return "".join(json.dumps(event) + "\n" for event in self.transcript).encode()


def test_an_api_error_it_reports_as_its_result_is_not_its_answer(tmp_path):
    """Claude Code closes a session its API refused with a `success` result whose text is the error (`is_error`)."""
    refused = "API Error: 400 field 'tools': WebFetch is not a tool of the run's model"
    ended = {"type": "result", "subtype": "success", "is_error": True, "result": refused}
    log = TrajectoryWriter(tmp_path / "episode.jsonl")
    outcome = ClaudeCode({}).solve(episode_in(EndedSandbox([ended]), tmp_path, log))
    log.close()
    assert outcome.status is Status.FORMAT_ERRORS and outcome.submission is None
    assert "is_error" in (outcome.detail or "")
