"""What the tests of installed agents (`--solver mini-swe-agent`, `gemini-cli`, `claude-code`) share: a project of two
tasks over one ledger, a loopback model scripted with bash tool calls for them, one real run of an agent through the
runner's proxy, and stand-in sandboxes for the solver's own checks (an agent still running at its time limit, an
agent that left a file of its choosing)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.cli.main import main
from harness.episode.budget import Budget
from harness.episode.solvers.agent_loop import LoopSettings
from harness.episode.solvers.base import EpisodeInputs
from harness.inputs.prompts import load_prompts
from harness.inputs.tasks import Task
from harness.models.replay_model import ReplayModel
from harness.records.image_store import ImageStore
from harness.records.trajectory import TrajectoryWriter, read_jsonl, read_trajectory
from harness.sandboxes.base import ExecResult
from harness.sandboxes.file_read import FileUnreadable
from tests.helpers.loopback_server import LoopbackServer
from tests.helpers.openai_server import ScriptedOpenAIServer, Step, reply

QUESTIONS = {"t1": "How many units in 2020 and 2021 together?", "t2": "How many units in 2020?"}
MODEL_FLAGS = ("--model", "openai/test-model")


def tool_results(request: dict[str, Any]) -> list[str]:
    return [message["content"] for message in request["messages"] if message.get("role") == "tool"]


def scripted_agent(probe: str, last: Step) -> Callable[[dict[str, Any]], Step]:
    """The model: for t1, read the ledger, run PROBE (a look around the sandbox), then LAST (the answer, in the
    agent's way); for t2, list the documents for ever."""

    def respond(request: dict[str, Any]) -> Step:
        if QUESTIONS["t2"] in json.dumps(request["messages"]):
            return reply("Looking.", bash="ls documents")
        seen = tool_results(request)
        steps = [reply("Reading the ledger.", bash="cat documents/ledger.md"), reply("Looking around.", bash=probe)]
        return steps[len(seen)] if len(seen) < len(steps) else last

    return respond


def project(root: Path) -> list[str]:
    """Two tasks over one collection; the flags that run them."""
    (root / "tasks").mkdir()
    collection = root / "collections" / "mini"
    collection.mkdir(parents=True)
    (collection / "ledger.md").write_text("| year | units |\n|---|---|\n| 2020 | 40 |\n| 2021 | 2 |\n")
    tasks = [
        {"id": task, "domain": "mini", "question": question, "answer": "42" if task == "t1" else "40"}
        | {"answer_format": "integer"}
        for task, question in QUESTIONS.items()
    ]
    (root / "tasks" / "mini.jsonl").write_text("".join(json.dumps(task) + "\n" for task in tasks))
    folders = ("--tasks-dir", str(root / "tasks"), "--collections-dir", str(root / "collections"))
    return ["--domain", "mini", *folders, "--results-dir", str(root / "results")]


@dataclass(frozen=True)
class AgentRun:
    code: int
    """The runner's exit code."""
    folder: Path
    rows: dict[str, dict[str, Any]]
    """By task id."""
    events: dict[str, list[dict[str, Any]]]
    """Each task's trajectory."""
    server: Any
    """The provider (a `ScriptedOpenAIServer`: what it was asked, with which key)."""
    record: dict[str, Any]
    """run.yaml's record of the solver."""


def run_agent(
    root: Path,
    solver: str,
    respond: Callable[[dict[str, Any]], Step],
    key: str,
    *flags: str,
    provider: LoopbackServer | None = None,
) -> AgentRun:
    """A run of SOLVER on the project made in ROOT, its model the loopback server answering with RESPOND (or the
    running PROVIDER, which the caller stops), the provider's key KEY (which the agent must never see), with
    FLAGS."""
    server = provider or ScriptedOpenAIServer()
    if isinstance(server, ScriptedOpenAIServer) and provider is None:
        server.respond = respond
        server.start()
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("OPENAI_API_KEY", key)
            patch.setenv("HARNESS_CACHE_DIR", str(root / "cache"))
            patch.delenv("COLUMNS", raising=False)
            model = [*MODEL_FLAGS, "--api-base", server.url]
            code = main([*project(root), "--run-id", "r", "--solver", solver, *model, *flags])
    finally:
        if provider is None:
            server.stop()
    run = root / "results" / "r"
    rows = {row["task_id"]: row for row in read_jsonl(run / "results.jsonl")} if code == 0 else {}
    events = {task: read_trajectory(run / "episodes" / "mini" / f"{task}.jsonl") for task in rows}
    record = yaml.safe_load((run / "run.yaml").read_text())["protocol"]["solver"] if code == 0 else {}
    return AgentRun(code, run, rows, events, server, record)


def run_on_backend(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    solver: str,
    respond: Callable[[dict[str, Any]], Step],
    key: str,
) -> AgentRun:
    """The shared run of an agent's module: SOLVER with `--max-turns 3` and two workers on the sandbox backend
    REQUEST's parameter names (Docker: the recipe's image, which the fixture builds once)."""
    if request.param == "docker":
        request.getfixturevalue("docker_image")
    flags = ("--sandbox", request.param, "--max-turns", "3", "--workers", "2")
    return run_agent(tmp_path_factory.mktemp(solver), solver, respond, key, *flags)


class StillRunningSandbox:
    """A sandbox whose one command (the agent) is still running when its time is up, and that wrote nothing."""

    def execute(self, command: str, timeout_s: float) -> ExecResult:
        return ExecResult("", "", None, timed_out=True, truncated=False, raw_bytes=0, duration_s=timeout_s)

    def read_bytes(self, path: str, max_bytes: int, timeout_s: float) -> bytes:
        raise FileUnreadable(f"{path}: no such file")


class LeftFileSandbox(StillRunningSandbox):
    """A sandbox whose agent was killed (by a command its model ran, say) and left FILE as its transcript."""

    def __init__(self, file: str) -> None:
        self.file = file

    def execute(self, command: str, timeout_s: float) -> ExecResult:
        return ExecResult("", "Killed", 137, timed_out=False, truncated=False, raw_bytes=6, duration_s=1.0)

    def read_bytes(self, path: str, max_bytes: int, timeout_s: float) -> bytes:
        return self.file.encode()


def episode_in(sandbox: Any, tmp_path: Path, log: TrajectoryWriter) -> EpisodeInputs:
    """An episode of t1 for a solver's own checks, in SANDBOX, its socket folder TMP_PATH."""
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


def probe_output(server: ScriptedOpenAIServer) -> str:
    """What the agent reported to its model of t1's probe (its second command): the one request holding it."""
    [probe] = [
        tool_results(request)[1]
        for request in server.requests
        if len(tool_results(request)) == 2 and QUESTIONS["t1"] in json.dumps(request["messages"])
    ]
    return probe
