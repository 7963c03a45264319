"""Prints `--executor ray` throughput at 1, 2 and 3 worker nodes and the fraction of the ideal speed-up.

Run: python bench/ray_scaling.py [EPISODES] [SECONDS_PER_CALL] [SANDBOXES_PER_NODE]   (default 200 1.0 4)
A loopback `ray.cluster_utils.Cluster` (a head that runs no episodes, worker nodes declaring
SANDBOXES_PER_NODE sandboxes) runs scripted episodes against a local OpenAI-compatible server that waits a
fixed time per call (tests/helpers/openai_server.py, real HTTP through litellm): one call per episode, then the
answer is graded. Ideal: N nodes run N times the episodes per second of one node. The bench stays
connected to the cluster across its runs (one Ray job), so a warm-up batch before each timed run starts the
new node's worker processes (each imports litellm: seconds, paid once per worker process and job).
"""

from __future__ import annotations

import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"  # keep Ray on loopback (read when ray is imported)
os.environ.setdefault("OPENAI_API_KEY", "sk-bench")  # the local server takes any key

import ray
from ray.cluster_utils import Cluster
from rich.console import Console

from harness.inputs.config_sources import build_config
from harness.run.executors.ray import SANDBOX_RESOURCE
from harness.run.planning.plan import plan_run
from harness.run.runner import execute_run
from tests.helpers.openai_server import ScriptedOpenAIServer, reply

NODE = {"node_ip_address": "127.0.0.1", "include_dashboard": False}
"""Worker nodes declare as many CPUs as sandboxes (episodes reserve none): Ray keeps that many idle worker
processes alive between runs instead of killing those above its CPU count after a second."""


def project(root: Path) -> None:
    (root / "collections" / "bench").mkdir(parents=True)
    (root / "collections" / "bench" / "doc.md").write_text("| year | value |\n| 2020 | 42 |\n")


def run(root: Path, server: ScriptedOpenAIServer, address: str, episodes: int, run_id: str, wait_s: float) -> float:
    """Seconds to run `episodes` episodes on the cluster."""
    step = reply(text="<answer>42</answer>")
    step.delay_s = wait_s
    server.push(*[step] * episodes)
    tasks = root / f"tasks-{run_id}"
    tasks.mkdir()
    rows = [{"id": f"b{i}", "domain": "bench", "question": "Q?", "answer": "42"} for i in range(episodes)]
    (tasks / "bench.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    config = build_config(
        {},
        {
            "model": "openai/bench-model",
            "api_base": server.url,
            "domain": "bench",
            "tasks_dir": tasks,
            "collections_dir": root / "collections",
            "results_dir": root / "results",
            "run_id": run_id,
            "executor": "ray",
            "ray_address": address,
            "max_connections": 1000,
        },
    )
    plan = plan_run(config)
    started = time.perf_counter()
    execute_run(plan, Console(file=io.StringIO()))
    return time.perf_counter() - started


def main(episodes: int, wait_s: float, per_node: int) -> None:
    server = ScriptedOpenAIServer()
    server.start()
    cluster = Cluster(initialize_head=True, head_node_args={**NODE, "num_cpus": 1, "resources": {SANDBOX_RESOURCE: 0}})
    try:
        ray.init(address=cluster.address, log_to_driver=False)  # each run joins this job, reusing its workers
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            project(root)
            speeds: dict[int, float] = {}
            for nodes in (1, 2, 3):
                cluster.add_node(**NODE, num_cpus=per_node, resources={SANDBOX_RESOURCE: per_node})
                cluster.wait_for_nodes()
                run(root, server, cluster.address, 2 * per_node * nodes, f"warm{nodes}", wait_s)
                elapsed = run(root, server, cluster.address, episodes, f"n{nodes}", wait_s)
                speeds[nodes] = episodes / elapsed
                ideal = speeds[nodes] / (nodes * speeds[1])
                print(
                    f"{nodes} node(s) x {per_node} sandboxes: {episodes} episodes ({wait_s:g} s per model call) "
                    f"in {elapsed:.1f} s, {speeds[nodes]:.2f} episodes/s, {ideal:.0%} of the ideal speed-up",
                    flush=True,
                )
    finally:
        ray.shutdown()
        cluster.shutdown()
        server.stop()


if __name__ == "__main__":
    arguments = sys.argv[1:]
    main(
        int(arguments[0]) if arguments else 200,
        float(arguments[1]) if len(arguments) > 1 else 1.0,
        int(arguments[2]) if len(arguments) > 2 else 4,
    )
