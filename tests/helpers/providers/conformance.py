"""The conformance episode every provider fake is held to, run through the real command line: 60 turns of tool
calls (parallel ones where the provider makes them), a format error in the middle, a retried 429 and 500, a kill
(SIGKILL) and resume mid-episode, then a replay and a regrade of the run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.helpers.providers.loopback import Fault, LoopbackProvider, Script, Turn

REPO = Path(__file__).resolve().parents[3]
EPISODE_TURNS = 60
FORMAT_ERROR_TURN = 20
"""A reply with neither an action nor an answer."""
PARALLEL_TURNS = frozenset({7, 33})
"""Two tool calls in one reply (a format error of ours, each call answered), where the provider makes them."""
KILL_AT_REQUEST = 10
DEMO_ANSWER = "38.145%"
"""The gold answer of the demo domain's first task."""


def episode_script(parallel_calls: bool) -> Script:
    """Sixty replies: commands, one text-only reply at FORMAT_ERROR_TURN, parallel calls, then the answer."""

    def turn(model_turns: int) -> Turn:
        if model_turns >= EPISODE_TURNS - 1:
            return Turn(text=f"The growth is <answer>{DEMO_ANSWER}</answer>")
        if model_turns == FORMAT_ERROR_TURN:
            return Turn(text="I should look at the 1970s table next.")
        if parallel_calls and model_turns in PARALLEL_TURNS:
            return Turn(commands=("ls documents | head -3", "wc -l documents/*1979.md"))
        return Turn(text="" if model_turns % 2 else f"Step {model_turns}.", commands=(f"echo step {model_turns}",))

    return turn


@dataclass(frozen=True)
class Alias:
    """How the command line names a provider's model, and what it needs to reach the fake."""

    model: str
    key_variable: str
    api_base_path: str = ""
    """Appended to the fake's address for --api-base (Gemini's client adds `/models/...` to a `/v1beta` base)."""
    model_args: tuple[str, ...] = ()
    parallel_calls: bool = False
    faults: dict[int, Fault] = field(default_factory=dict)
    """Request number -> fault: the rate limit and server error the run must retry through."""


def harness_command(alias: Alias, fake: LoopbackProvider, results: Path, *extra: str) -> list[str]:
    arguments = [arg for pair in alias.model_args for arg in ("--model-arg", pair)]
    return [
        sys.executable,
        "-m",
        "harness",
        "--model",
        alias.model,
        "--api-base",
        fake.api_base + alias.api_base_path,
        *arguments,
        "--domain",
        "demo",
        "--limit",
        "1",
        "--max-turns",
        "80",
        "--results-dir",
        str(results),
        "--run-id",
        "conformance",
        *extra,
    ]


def harness_environment(alias: Alias, cache: Path) -> dict[str, str]:
    environment = dict(os.environ)
    environment.update({alias.key_variable: "loopback-key", "HARNESS_CACHE_DIR": str(cache), "PYTHONPATH": str(REPO)})
    return environment


@dataclass(frozen=True)
class ConformanceRun:
    rows: list[dict[str, Any]]
    run_dir: Path
    killed_after: int
    """Requests the fake had answered when the first process was killed."""
    replay_code: int
    regrade_code: int
    output: str


def run_conformance_episode(alias: Alias, fake: LoopbackProvider, workdir: Path) -> ConformanceRun:
    """Start the run, SIGKILL it once the fake has seen KILL_AT_REQUEST requests, resume it to the end, then
    replay and regrade it; every step through `python -m harness` in a subprocess."""
    fake.faults.update(alias.faults)
    results, environment = workdir / "results", harness_environment(alias, workdir / "cache")
    command = harness_command(alias, fake, results)
    first = subprocess.Popen(
        command, cwd=REPO, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )
    reached = fake.wait_for_requests(KILL_AT_REQUEST, timeout_s=300)
    killed_after = len(fake.requests)
    os.killpg(first.pid, signal.SIGKILL)
    first_output = first.communicate()[0].decode(errors="replace")
    if not reached:
        raise AssertionError(f"the first run stopped before request {KILL_AT_REQUEST}:\n{first_output}")
    resumed = subprocess.run(command, cwd=REPO, env=environment, capture_output=True, text=True, timeout=600)
    run_dir = results / "conformance"
    replay = _harness(["replay", str(run_dir)], environment)
    regrade = _harness(["replay", "--regrade", str(run_dir)], environment)
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines() if line.strip()]
    output = "\n".join([first_output, resumed.stdout, resumed.stderr, replay.stdout, replay.stderr, regrade.stdout])
    return ConformanceRun(rows, run_dir, killed_after, replay.returncode, regrade.returncode, output)


def _harness(arguments: list[str], environment: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "harness", *arguments]
    return subprocess.run(command, cwd=REPO, env=environment, capture_output=True, text=True, timeout=600)


def model_calls(run_dir: Path) -> list[dict[str, Any]]:
    """The `model_call` events of the run's one episode."""
    [episode] = (run_dir / "episodes" / "demo").glob("*.jsonl")
    events = [json.loads(line) for line in episode.read_text().splitlines() if line.strip()]
    return [event for event in events if event.get("event") == "model_call"]
