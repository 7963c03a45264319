"""Per-step overhead of this runner next to mini-swe-agent's, local (bubblewrap) and Docker.

Run: python bench/peer_overhead.py [ROUNDS] (needs the `bench` extra: pip install -e '.[bench]'; Docker rows
need the engine and the recipe image, else they are left out). Installs nothing itself.

Each side runs whole episodes in this process: STEPS commands `true`, then a submission, minus an
episode that submits at once, so start-up, set-up and grading cancel and what is left is the cost of a
step (model call, command, observation, logging). The peer uses its deterministic test model and its own
environments: `BubblewrapEnvironment` (network on, no limits) and `DockerEnvironment` (`docker exec`
CLI); ours runs with full containment. Rounds interleave the two sides; figures are medians.
Also printed: sandbox start per episode with a 1 MB and a 2 GB collection (sparse files: both backends
bind-mount the collection, so its size should not matter), and the floor, a bare bwrap running `true`.
"""

from __future__ import annotations

import io
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import yaml
from rich.console import Console

from harness.inputs.config_sources import build_config
from harness.run.planning.plan import plan_run
from harness.run.runner import execute_run
from harness.sandboxes.base import SandboxSettings
from harness.sandboxes.local.sandbox import find_bwrap

STEPS = 50
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT; echo 42"


def project(root: Path, collection_bytes: int) -> None:
    """One task over a collection of `collection_bytes` (sparse files of at most 100 MB)."""
    (root / "tasks").mkdir()
    documents = root / "collections" / "bench"
    documents.mkdir(parents=True)
    (documents / "notes.md").write_text("| year | value |\n| 2020 | 42 |\n")
    for index in range(collection_bytes // (100 << 20)):
        with open(documents / f"part-{index}.bin", "wb") as part:
            part.truncate(100 << 20)
    row = {"id": "t1", "domain": "bench", "question": "Q?", "answer": "42"}
    (root / "tasks" / "bench.jsonl").write_text(json.dumps(row) + "\n")


class Ours:
    """Episodes through the runner's own run path (`execute_run`) with a scripted model."""

    def __init__(self, root: Path, sandbox: str):
        self._root, self._sandbox, self._runs = root, sandbox, 0

    def episode(self, steps: int) -> float:
        self._runs += 1
        script = self._root / f"script-{steps}.yaml"
        script.write_text(yaml.safe_dump([{"bash": "true"}] * steps + ["<answer>42</answer>"]))
        config = build_config(
            {},
            {
                "model": f"scripted:{script}",
                "domain": "bench",
                "tasks_dir": self._root / "tasks",
                "collections_dir": self._root / "collections",
                "results_dir": self._root / "results",
                "run_id": f"{self._sandbox}-{self._runs}",
                "sandbox": self._sandbox,
            },
        )
        plan = plan_run(config)
        started = time.perf_counter()
        execute_run(plan, Console(file=io.StringIO()))
        return time.perf_counter() - started


class Peer:
    """mini-swe-agent's DefaultAgent with its DeterministicModel, on one of its environments."""

    def __init__(self, environment: Callable[[], object]):
        self._environment = environment

    def episode(self, steps: int) -> float:
        from minisweagent.agents.default import DefaultAgent
        from minisweagent.models.test_models import DeterministicModel, make_output

        outputs = [make_output("step", [{"command": "true"}]) for _ in range(steps)]
        outputs.append(make_output("submit", [{"command": SUBMIT}]))
        started = time.perf_counter()
        env = self._environment()
        agent = DefaultAgent(
            DeterministicModel(outputs=outputs),
            env,
            system_template="You solve tasks.",
            instance_template="{{task}}",
            step_limit=0,
            cost_limit=0,
        )
        result = agent.run("Q?")
        _cleanup(env)
        elapsed = time.perf_counter() - started
        assert result.get("exit_status") == "Submitted", result
        return elapsed


def _cleanup(env: object) -> None:
    cleanup = getattr(env, "cleanup", None)
    if cleanup is not None:
        cleanup()


def interleaved(sides: dict[str, Ours | Peer], rounds: int) -> dict[str, float]:
    """Per side, the median over rounds of (STEPS-step episode - 0-step episode) / STEPS, in seconds.

    Wall time only: CPU from RUSAGE_CHILDREN would miss every command run in a pid namespace (bwrap
    exits without reaping the sandbox's pid 1), which is ours and not the peer's.
    """
    samples: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(rounds):
        for name, side in sides.items():
            samples[name].append((side.episode(STEPS) - side.episode(0)) / STEPS)
    return {name: statistics.median(values) for name, values in samples.items()}


def bwrap_floor(rounds: int) -> float:
    argv = [find_bwrap(), "--unshare-all", "--ro-bind", "/", "/", "--", "/bin/bash", "-c", "true"]
    timings = []
    for _ in range(rounds * 10):
        started = time.perf_counter()
        subprocess.run(argv, check=True)
        timings.append(time.perf_counter() - started)
    return statistics.median(timings)


def sandbox_start(backend: str, collection: Path, rounds: int) -> float:
    """Median seconds of `start()` (the container or bwrap holder up) plus `close()` per episode."""
    from harness.sandboxes.backend import BackendSetup
    from harness.sandboxes.registry import prepare_backend

    setup = BackendSetup(settings=SandboxSettings(), run_id="bench-start", collections={}, time_limit_s=3600.0)
    prepared = prepare_backend(backend, setup)
    prepared.start()
    timings = []
    for index in range(rounds * 5):
        box = prepared.new_sandbox("bench", collection, f"start-{index}", threading.Event())
        started = time.perf_counter()
        box.start()
        timings.append(time.perf_counter() - started)
        box.close()
    return statistics.median(timings)


def docker_image() -> str | None:
    from harness.sandboxes.docker.client import docker_client
    from harness.sandboxes.recipe import default_image

    try:
        docker_client().images.get(default_image())
    except Exception:
        return None
    return default_image()


def main(rounds: int) -> None:
    logging.disable(logging.WARNING)  # the peer logs every step
    image = docker_image()
    with tempfile.TemporaryDirectory() as folder:
        small, large = Path(folder) / "small", Path(folder) / "large"
        small.mkdir(), large.mkdir()
        project(small, 1 << 20)
        project(large, 2 << 30)
        from minisweagent.environments.docker import DockerEnvironment
        from minisweagent.environments.extra.bubblewrap import BubblewrapEnvironment

        rows = [
            (
                "local",
                interleaved(
                    {
                        "peer": Peer(lambda: BubblewrapEnvironment(executable=find_bwrap())),
                        "ours": Ours(small, "local"),
                    },
                    rounds,
                ),
            )
        ]
        if image is not None:
            rows.append(
                (
                    "docker",
                    interleaved(
                        {
                            "peer": Peer(
                                lambda: DockerEnvironment(image=image, cwd="/workspace", interpreter=["bash", "-c"])
                            ),
                            "ours": Ours(small, "docker"),
                        },
                        rounds,
                    ),
                )
            )
        floor = bwrap_floor(rounds)
        print(f"per step ({STEPS} steps of `true` minus a 0-step episode, median of {rounds} interleaved rounds)")
        print("| per step | mini-swe-agent | this project | ratio |\n|---|---|---|---|")
        for name, figures in rows:
            peer, ours = figures["peer"] * 1000, figures["ours"] * 1000
            print(f"| {name} | {peer:.1f} ms | {ours:.1f} ms | {ours / peer:.2f}× |")
        print(f"| floor: `bwrap --unshare-all … bash -c true` | | {floor * 1000:.1f} ms | |")
        print("\n| sandbox start per episode | 1 MB collection | 2 GB collection |\n|---|---|---|")
        for backend in ["local"] + (["docker"] if image is not None else []):
            figures = [sandbox_start(backend, root / "collections" / "bench", rounds) for root in (small, large)]
            print(f"| {backend} | {figures[0] * 1000:.1f} ms | {figures[1] * 1000:.1f} ms |")


if __name__ == "__main__":
    os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
