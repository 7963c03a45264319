"""mini-swe-agent as an installed agent (`--solver mini-swe-agent`): its own code, the pinned PyPI release, in real
bubblewrap sandboxes and Docker containers, its model calls through the runner's proxy on the sandbox's unix
socket to the run's model, here litellm over real HTTP to the loopback OpenAI server, scripted with bash tool
calls. One run of two tasks on each backend (each a sandbox, side by side) serves the tests: t1 explores, looks
around its sandbox and answers; t2 never answers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.analysis.viewer_site import ViewerSite
from harness.cli.main import main
from harness.core.status import Status
from harness.episode.budget import Budget
from harness.episode.solvers.agent_loop import LoopSettings
from harness.episode.solvers.base import EpisodeInputs
from harness.episode.solvers.mini_swe_agent import MiniSweAgent
from harness.inputs.prompts import load_prompts
from harness.inputs.tasks import Task
from harness.models.replay_model import ReplayModel
from harness.records.image_store import ImageStore
from harness.records.trajectory import TrajectoryWriter, read_jsonl, read_trajectory
from harness.sandboxes.base import ExecResult
from harness.sandboxes.file_read import FileUnreadable
from tests.helpers.openai_server import ScriptedOpenAIServer, Step, reply

KEY = "sk-h50-never-in-the-sandbox"
SUBMIT = "printf 'COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\\n<answer>42</answer>\\n'"
PROBE = (
    f"env | grep -c {KEY}; grep -rls {KEY} /tmp /workspace /run /etc | wc -l; ls -A /run/model; "
    "python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_STREAM)' 2>&1 | tail -n 1"
)
FORMAT = "mini-swe-agent-1.1"
QUESTIONS = {"t1": "How many units in 2020 and 2021 together?", "t2": "How many units in 2020?"}


def tool_results(request: dict[str, Any]) -> list[str]:
    return [message["content"] for message in request["messages"] if message.get("role") == "tool"]


def scripted(request: dict[str, Any]) -> Step:
    """t1: read the ledger, look around the sandbox, submit 42; t2: list the documents for ever."""
    if QUESTIONS["t2"] in json.dumps(request["messages"]):
        return reply("Looking.", bash="ls documents")
    seen = tool_results(request)
    steps = [reply("Reading the ledger.", bash="cat documents/ledger.md"), reply("Looking around.", bash=PROBE)]
    return steps[len(seen)] if len(seen) < len(steps) else reply("40 + 2.", bash=SUBMIT)


def project(root: Path) -> list[str]:
    """Two tasks over one collection; the flags that run them."""
    (root / "tasks").mkdir()
    collection = root / "collections" / "mini"
    collection.mkdir(parents=True)
    (collection / "ledger.md").write_text("| year | units |\n|---|---|\n| 2020 | 40 |\n| 2021 | 2 |\n")
    tasks = [
        {
            "id": task,
            "domain": "mini",
            "question": question,
            "answer": "42" if task == "t1" else "40",
            "answer_format": "integer",
        }
        for task, question in QUESTIONS.items()
    ]
    (root / "tasks" / "mini.jsonl").write_text("".join(json.dumps(task) + "\n" for task in tasks))
    return [
        "--domain",
        "mini",
        "--tasks-dir",
        str(root / "tasks"),
        "--collections-dir",
        str(root / "collections"),
        "--results-dir",
        str(root / "results"),
    ]


@dataclass(frozen=True)
class AgentRun:
    folder: Path
    rows: dict[str, dict[str, Any]]
    """By task id."""
    events: dict[str, list[dict[str, Any]]]
    """Each task's trajectory."""
    server: ScriptedOpenAIServer
    """The provider: what it was asked, with which key."""


@pytest.fixture(scope="module", params=["local", "docker"])
def agent_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """The run (`--max-turns 3`, two workers) on each backend an installed agent runs on (Docker: the recipe's
    image, whose agent is its own install, sandbox_templates/agents.txt), its rows by task, its trajectories by
    task, the provider's requests."""
    if request.param == "docker":
        request.getfixturevalue("docker_image")
    root = tmp_path_factory.mktemp("installed")
    server = ScriptedOpenAIServer()
    server.respond = scripted
    server.start()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", KEY)
        patch.setenv("HARNESS_CACHE_DIR", str(root / "cache"))
        patch.delenv("COLUMNS", raising=False)
        flags = ["--solver", "mini-swe-agent", "--model", "openai/test-model", "--api-base", server.url]
        flags += ["--sandbox", request.param]
        code = main([*project(root), "--run-id", "r", *flags, "--max-turns", "3", "--workers", "2"])
    server.stop()
    run = root / "results" / "r"
    rows = {row["task_id"]: row for row in read_jsonl(run / "results.jsonl")} if code == 0 else {}
    events = {task: read_trajectory(run / "episodes" / "mini" / f"{task}.jsonl") for task in rows}
    return AgentRun(run, rows, events, server)


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
    [probe] = [
        tool_results(request)[1]
        for request in agent_run.server.requests
        if len(tool_results(request)) == 2
        if QUESTIONS["t1"] in json.dumps(request["messages"])
    ]
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


class StillRunningSandbox:
    """A sandbox whose one command (the agent) is still running when its time is up, and that wrote nothing."""

    def execute(self, command: str, timeout_s: float) -> ExecResult:
        return ExecResult("", "", None, timed_out=True, truncated=False, raw_bytes=0, duration_s=timeout_s)

    def read_bytes(self, path: str, max_bytes: int, timeout_s: float) -> bytes:
        raise FileUnreadable(f"{path}: no such file")


def episode_in(sandbox: Any, tmp_path: Path, log: TrajectoryWriter) -> EpisodeInputs:
    return EpisodeInputs(
        task=Task(id="t1", domain="mini", question="How many?", answer="42"),
        model=ReplayModel("scripted", []),
        budget=Budget(max_turns=3, time_limit_s=20, context_window=None, output_reserve=0),
        log=log,
        prompts=load_prompts(),
        loop=LoopSettings("toolcall", 30.0, 3),
        images=ImageStore(tmp_path),
        collection=None,
        sandbox=sandbox,
        socket_folder=tmp_path,
    )


def test_an_agent_still_running_at_the_time_limit_ends_as_time_limit(tmp_path):
    log = TrajectoryWriter(tmp_path / "episode.jsonl")
    outcome = MiniSweAgent({}).solve(episode_in(StillRunningSandbox(), tmp_path, log))
    log.close()
    assert outcome.status is Status.TIME_LIMIT and outcome.submission is None


class LeftFileSandbox(StillRunningSandbox):
    """A sandbox whose agent was killed (by a command its model ran, say) and left FILE as its trajectory."""

    def __init__(self, file: str) -> None:
        self.file = file

    def execute(self, command: str, timeout_s: float) -> ExecResult:
        return ExecResult("", "Killed", 137, timed_out=False, truncated=False, raw_bytes=6, duration_s=1.0)

    def read_bytes(self, path: str, max_bytes: int, timeout_s: float) -> bytes:
        return self.file.encode()


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
