"""`--executor ray --sandbox e2b` on a real multi-node Ray cluster on loopback: each worker node's processes get
tests/helpers/fake_e2b.py as `e2b` (tests/helpers/fake_e2b_site/), all on one service file, as every host sees one
E2B, and each node a host name of its own; the driver runs in its own process the same way
(tests/helpers/fake_e2b_runner.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import tests.helpers.fake_e2b as fake_e2b
from tests.conftest import REPO
from tests.run.test_batch import many_tasks, rows_of
from tests.run.test_ray_executor import LOOPBACK

ray = pytest.importorskip("ray", reason="the ray extra is not installed: pip install -e '.[ray]'")
from ray.cluster_utils import Cluster  # noqa: E402

from harness.run.executors.ray import SANDBOX_RESOURCE  # noqa: E402

SITE = REPO / "tests" / "helpers" / "fake_e2b_site"


@pytest.fixture
def e2b_cluster(mini, tmp_path):
    """A head running no episodes and two worker nodes of two sandboxes, `node-a` and `node-b`, on the
    service file tmp_path/service.jsonl."""
    service = tmp_path / "service.jsonl"
    cluster = Cluster(
        initialize_head=True, head_node_args={**LOOPBACK, "num_cpus": 1, "resources": {SANDBOX_RESOURCE: 0}}
    )
    nodes = {}
    for host in ("node-a", "node-b"):
        environment = {
            "PYTHONPATH": f"{SITE}:{REPO}",
            "FAKE_E2B_SERVICE": str(service),
            "FAKE_E2B_HOST": host,
            "FAKE_E2B_COLLECTION": str(mini.root / "collections" / "mini"),
            "E2B_API_KEY": "e2b-test-key",
        }
        nodes[host] = cluster.add_node(**LOOPBACK, num_cpus=2, resources={SANDBOX_RESOURCE: 2}, env_vars=environment)
    cluster.wait_for_nodes()
    yield cluster, nodes, fake_e2b.SharedSandboxes(service)
    cluster.shutdown()


def test_a_node_lost_mid_episode_leaves_a_sandbox_the_drivers_end_kills(e2b_cluster, mini):
    """infra `api/internal/handlers/sandboxes_list.go` lists the team's sandboxes by metadata whichever host made
    them. A node lost mid-episode leaves its sandbox running; the driver's start, in every node's sandboxes'
    metadata, finds and kills it once the run ends."""
    cluster, nodes, service = e2b_cluster
    ids = many_tasks(mini, 6)
    script = mini.script([{"bash": "sleep 2"}, "<answer>42</answer>"])
    driver = [
        sys.executable,
        "-m",
        "tests.helpers.fake_e2b_runner",
        str(service.path),
        str(mini.root / "collections" / "mini"),
        "driver-host",
        "--",
        "--model",
        script,
        "--domain",
        "mini",
        *mini.folder_arguments("lost"),
        "--sandbox",
        "e2b",
        "--executor",
        "ray",
        "--ray-address",
        cluster.address,
    ]
    environment = os.environ | {"E2B_API_KEY": "e2b-test-key"}
    process = subprocess.Popen(
        driver, cwd=REPO, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 120
    while not episode_sandboxes_on(service, "node-b") and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    assert episode_sandboxes_on(service, "node-b"), "\n".join(process.communicate())
    cluster.remove_node(nodes["node-b"])  # its episodes die with it; their sandboxes run on
    left = [info.sandbox_id for info in episode_sandboxes_on(service, "node-b")]
    output, errors = process.communicate(timeout=180)
    assert process.returncode == 0, errors
    rows = rows_of(mini.results_dir / "lost" / "results.jsonl")
    assert sorted(row["task_id"] for row in rows) == ids and {row["status"] for row in rows} == {"answered"}
    assert service.running() == [], output  # the lost node's sandboxes too
    assert f"sandboxes the run left running: {' '.join(left)}" in " ".join(output.split())
    created = [json.loads(line) for line in Path(service.path).read_text().splitlines() if "created" in line]
    owners = {line["metadata"]["harness.owner"].split(":")[0] for line in created}
    assert owners == {"driver-host", "node-a", "node-b"}  # the tool checks and the episodes, on every host
    assert len({line["metadata"]["harness.invocation"] for line in created}) == 1  # one start, on every node


def episode_sandboxes_on(service: fake_e2b.SharedSandboxes, host: str) -> list[fake_e2b.FakeSandboxInfo]:
    return [
        info
        for info in service.running()
        if info.metadata["harness.owner"].startswith(f"{host}:") and info.metadata["harness.episode"] != "tool-check"
    ]
