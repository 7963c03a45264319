"""mini-swe-agent as an installed agent (`--solver mini-swe-agent`): its own code, the pinned PyPI release, in real
bubblewrap sandboxes and Docker containers, its model calls through the runner's proxy on the sandbox's unix
socket to the run's model, here litellm over real HTTP to the loopback OpenAI server, scripted with bash tool
calls. One run of two tasks on each backend (each a sandbox, side by side) serves the tests: t1 explores, looks
around its sandbox and answers; t2 never answers."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.analysis.viewer_site import ViewerSite
from harness.cli.main import main
from harness.core.status import Status
from harness.episode.solvers.mini_swe_agent import MiniSweAgent
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

KEY = "sk-h50-never-in-the-sandbox"
SUBMIT = "printf 'COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\\n<answer>42</answer>\\n'"
PROBE = (
    f"env | grep -c {KEY}; grep -rls {KEY} /tmp /workspace /run /etc | wc -l; ls -A /run/model; "
    "python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_STREAM)' 2>&1 | tail -n 1"
)
FORMAT = "mini-swe-agent-1.1"


scripted = scripted_agent(PROBE, reply("40 + 2.", bash=SUBMIT))
"""t1: read the ledger, look around the sandbox, submit 42; t2: list the documents for ever."""


@pytest.fixture(scope="module", params=["local", "docker"])
def agent_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """The run (`--max-turns 3`, two workers) on each backend an installed agent runs on (Docker: the recipe's
    image, whose agent is its own install, sandbox_templates/agents.txt), its rows by task, its trajectories by
    task, the provider's requests."""
    return run_on_backend(request, tmp_path_factory, "mini-swe-agent", scripted, KEY)


@pytest.mark.slow  # the shared run: ~17 s, on the first of them
def test_mini_swe_agent_answers_right_through_the_proxy(agent_run):
    row = agent_run.rows["t1"]
    assert (row["status"], row["verdict"], row["turns"]) == ("answered", "correct", 3)
    assert row["files_touched"] == 1  # the ledger it read, from the commands and outputs the proxy logged


@pytest.mark.slow  # the shared run: ~17 s, on the first of them
def test_its_own_transcript_holds_the_calls_the_proxy_recorded(agent_run):
    ours = [event["response"]["tool_calls"] for event in agent_run.events["t1"] if event["event"] == "model_call"]
    [transcript] = [event["transcript"] for event in agent_run.events["t1"] if event["event"] == "agent_transcript"]
    theirs = [message["tool_calls"] for message in transcript["messages"] if message.get("tool_calls")]
    assert [[call["arguments"] for call in calls] for calls in ours] == [
        [call["function"]["arguments"] for call in calls] for calls in theirs
    ]
    assert len(ours) == 3 and transcript["info"]["exit_status"] == "Submitted"


@pytest.mark.slow  # the shared run: ~17 s, on the first of them
def test_show_prints_its_own_transcript_after_ours_with_the_commands_it_ran(agent_run, capsys, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    assert main(["show", str(agent_run.folder), "t1"]) == 0
    out = capsys.readouterr().out
    theirs = out.index("mini-swe-agent 2.4.6 · its own transcript (mini-swe-agent-1.1) · 8 messages, ended Submitted")
    assert out.index("turn 3 · reply") < theirs < out.index("══ answered · correct")
    roles = [line.removeprefix("── ") for line in out[theirs:].splitlines() if line.startswith("── ")]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant", "exit"]
    assert out.count("$ cat documents/ledger.md") == 2  # as the proxy logged it, and in the agent's own words
    assert out.index("$ cat documents/ledger.md", theirs) < out.index("| 2020 | 40 |", theirs)


@pytest.mark.slow  # the shared run: ~17 s, on the first of them
def test_the_viewer_is_given_its_own_transcript_role_by_role(agent_run):
    site = ViewerSite([agent_run.folder])
    [number] = [n for n, episode in enumerate(site.episodes) if episode.listed["task_id"] == "t1"]
    transcript = site.episode(number)["transcript"]
    assert (transcript["agent"], transcript["format"], transcript["raw"]) == ("mini-swe-agent", FORMAT, None)
    commands = [command for message in transcript["messages"] for command in message["commands"]]
    assert commands == ["cat documents/ledger.md", PROBE, SUBMIT]


@pytest.mark.slow  # the shared run: ~17 s, on the first of them
def test_inside_its_sandbox_only_the_proxy_answers_and_the_key_is_nowhere(agent_run):
    probe = probe_output(agent_run.server)
    assert KEY not in probe
    output = probe.split("<output>")[1].split()
    assert output[:3] == ["0", "0", "api.sock"]  # not in its environment nor a file it reads; one socket
    assert "Address family not supported" in probe  # no IP socket: no address of the host's loopback either
    assert f"Bearer {KEY}" in agent_run.server.authorizations  # the runner called the provider with it


@pytest.mark.slow  # the shared run: ~17 s, on the first of them
def test_a_turn_budget_of_3_ends_the_agent_and_the_row_says_turn_limit(agent_run):
    row = agent_run.rows["t2"]
    assert (row["status"], row["turns"]) == ("turn_limit", 3)
    assert len([event for event in agent_run.events["t2"] if event["event"] == "model_call"]) == 3


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--vision"], "--vision"),
        (["--action-format", "text"], "toolcall"),
        (["--closed-book"], "--closed-book"),
        (["--sandbox", "e2b"], "--sandbox e2b"),
    ],
)
def test_settings_an_installed_agent_cannot_run_with_are_refused_before_anything_is_written(mini, flags, named):
    outcome = mini.run("--solver", "mini-swe-agent", "--model", mini.script(["<answer>42</answer>"]), *flags)
    assert outcome.exit_code == 2 and not outcome.run_dir.exists()
    assert "--solver mini-swe-agent:" in outcome.output and named in outcome.output


@pytest.mark.slow  # mini-swe-agent's start-up in its sandbox: ~10 s
def test_mini_swe_agent_answers_through_the_proxy_in_anthropics_api(mini, openai_server, openai_key):
    openai_server.respond = scripted
    flags = ["--solver-arg", "api=anthropic", "--model", "openai/test-model", "--api-base", openai_server.url]
    outcome = mini.run("--solver", "mini-swe-agent", *flags)
    [row] = outcome.rows
    assert (row["status"], row["verdict"], row["turns"]) == ("answered", "correct", 3)
    record = yaml.safe_load((outcome.run_dir / "run.yaml").read_text())["protocol"]["solver"]
    assert record["args"] == {"api": "anthropic"} and record["agent"]["version"] == "2.4.6"


def test_an_agent_still_running_at_the_time_limit_ends_as_time_limit(tmp_path):
    log = TrajectoryWriter(tmp_path / "episode.jsonl")
    outcome = MiniSweAgent({}).solve(episode_in(StillRunningSandbox(), tmp_path, log))
    log.close()
    assert outcome.status is Status.TIME_LIMIT and outcome.submission is None


@pytest.mark.parametrize(
    "file",
    [
        '{"info": {"exit_status": "Submitted", "submission": "<answer>4',  # cut short mid-write
        '{"messages": ' + "[" * 400 + "]" * 400 + "}",  # JSON, but nested deeper than a record holds
    ],
    ids=["cut-short", "nested-400-deep"],
)
def test_a_transcript_the_agent_left_unreadable_is_kept_as_its_text(tmp_path, file):
    log = TrajectoryWriter(tmp_path / "episode.jsonl")
    outcome = MiniSweAgent({}).solve(episode_in(LeftFileSandbox(file), tmp_path, log))
    log.close()
    [kept] = [event["transcript"] for event in read_jsonl(tmp_path / "episode.jsonl")]
    assert kept == file and outcome.status is Status.FORMAT_ERRORS


def test_the_images_agent_is_the_release_the_runner_pins():
    """sandbox_templates/agents.txt (the Docker image's and E2B templates' agent) and constraints.txt (the runner's,
    which the local sandbox runs) name the same release of each package they both pin."""
    repo = Path(__file__).resolve().parents[2]

    def pins(path: Path) -> dict[str, str]:
        lines = (line.split("#")[0].split()[0] for line in path.read_text().splitlines() if line.split("#")[0].strip())
        return {name.lower(): version for name, _, version in (line.partition("==") for line in lines) if version}

    image, runner = pins(repo / "sandbox_templates" / "agents.txt"), pins(repo / "constraints.txt")
    assert {"mini-swe-agent", "litellm", "openai", "httpx"} <= image.keys()
    assert {name: runner.get(name) for name in image} == image
