"""`--executor ray` on a real multi-node Ray cluster on this machine (`ray.cluster_utils.Cluster`, bound to
loopback): a head that runs no episodes and two worker nodes declaring two sandboxes each."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest

from tests.conftest import REPO
from tests.openai_server import ScriptedOpenAIServer, reply
from tests.test_batch import command, comparable, many_tasks, rows_of

# Ray binds to the machine's outward address and resolves 127.0.0.1 to it; with clusters "disabled" (what
# it does on macOS) it keeps to loopback. Read when ray is imported, and inherited by the nodes and drivers.
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
ray = pytest.importorskip("ray", reason="the ray extra is not installed: pip install -e '.[ray]'")
from ray.cluster_utils import Cluster  # noqa: E402

from harness.ray_executor import SANDBOX_RESOURCE  # noqa: E402

SLOW_EPISODE = [{"bash": "sleep 0.5"}, "<answer>42</answer>"]
LOOPBACK = {"node_ip_address": "127.0.0.1", "num_cpus": 1, "include_dashboard": False}


def worker_node(cluster: Cluster):
    return cluster.add_node(**LOOPBACK, resources={SANDBOX_RESOURCE: 2})


@pytest.fixture(scope="module")
def cluster():
    os.environ.setdefault("OPENAI_API_KEY", "sk-test")  # the nodes' environment: keys never travel with tasks
    cluster = Cluster(initialize_head=True, head_node_args={**LOOPBACK, "resources": {SANDBOX_RESOURCE: 0}})
    workers = [worker_node(cluster), worker_node(cluster)]
    cluster.wait_for_nodes()
    yield cluster, workers
    cluster.shutdown()


def nodes_of(run_dir, ids: list[str]) -> Counter:
    """How many episodes ran on each node (the node id is in each episode_start)."""
    starts = [json.loads((run_dir / "episodes" / "mini" / f"{i}.jsonl").read_text().splitlines()[0]) for i in ids]
    return Counter(start["ray_node"] for start in starts)


def wait_for_rows(path, count: int) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(rows_of(path)) < count:
        time.sleep(0.05)


def test_a_batch_spreads_over_both_worker_nodes_with_the_rows_of_local_threads(cluster, mini):
    ids = many_tasks(mini, 8)
    script = mini.script(SLOW_EPISODE)
    on_ray = mini.run("--model", script, "--executor", "ray", "--ray-address", cluster[0].address, run_id="ray")
    local = mini.run("--model", script, "--workers", "4", run_id="local")
    assert on_ray.exit_code == 0 and local.exit_code == 0, on_ray.output
    assert sorted(row["task_id"] for row in on_ray.rows) == ids
    assert comparable(on_ray.rows) == comparable(local.rows)
    workers = {node.node_id for node in cluster[1]}
    assert set(nodes_of(on_ray.run_dir, ids)) == workers  # both worker nodes ran episodes, the head none
    for task_id in ids:  # the driver wrote every trajectory, streamed from the nodes, in order
        events = [event["event"] for event in on_ray.trajectory(task_id)]
        assert events == [e["event"] for e in local.trajectory(task_id)]


def test_the_connection_bound_holds_across_the_cluster(cluster, mini):
    many_tasks(mini, 8)
    server = ScriptedOpenAIServer()
    server.push(*[reply(text="<answer>42</answer>") for _ in range(8)])
    for step in server.steps:
        step.delay_s = 0.4
    server.start()
    try:
        outcome = mini.run("--model", "openai/test-model", "--api-base", server.url, "--executor", "ray",
                           "--ray-address", cluster[0].address, "--max-connections", "2", run_id="bound")  # fmt: skip
    finally:
        server.stop()
    assert outcome.exit_code == 0, outcome.output
    assert [row["status"] for row in outcome.rows] == ["answered"] * 8
    assert server.max_concurrent == 2  # four sandboxes on two nodes, never more than two calls in flight
