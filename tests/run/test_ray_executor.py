"""`--executor ray` on a real multi-node Ray cluster on this machine (`ray.cluster_utils.Cluster`, bound to
loopback): a head that runs no episodes and two worker nodes declaring two sandboxes each."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.helpers.openai_server import ScriptedOpenAIServer, reply
from tests.helpers.silent_server import SilentServer
from tests.run.test_batch import command, comparable, many_tasks, rows_of
from tests.run.test_interrupt import CTRL_C_BOUND_S, stop_with_ctrl_c, wait_until

# Ray binds to the machine's outward address and resolves 127.0.0.1 to it; with clusters "disabled" (what
# it does on macOS) it keeps to loopback. Read when ray is imported, and inherited by the nodes and drivers.
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
ray = pytest.importorskip("ray", reason="the ray extra is not installed: pip install -e '.[ray]'")
from ray.cluster_utils import Cluster  # noqa: E402

from harness.run.executors.ray import SANDBOX_RESOURCE  # noqa: E402

SLOW_EPISODE = [{"bash": "sleep 0.5"}, "<answer>42</answer>"]
LOOPBACK = {"node_ip_address": "127.0.0.1", "include_dashboard": False}


def worker_node(cluster: Cluster):
    # as many CPUs as sandboxes (episodes reserve none): Ray keeps that many idle worker processes between runs
    return cluster.add_node(**LOOPBACK, num_cpus=2, resources={SANDBOX_RESOURCE: 2})


@pytest.fixture(scope="module")
def cluster():
    os.environ.setdefault("OPENAI_API_KEY", "sk-test")  # the nodes' environment: keys never travel with tasks
    head = {**LOOPBACK, "num_cpus": 1, "resources": {SANDBOX_RESOURCE: 0}}
    cluster = Cluster(initialize_head=True, head_node_args=head)
    workers = [worker_node(cluster), worker_node(cluster)]
    cluster.wait_for_nodes()
    # one Ray job for the in-process runs (they join it): the nodes' worker processes serve them all
    ray.init(address=cluster.address, log_to_driver=False)
    yield cluster, workers
    ray.shutdown()
    cluster.shutdown()


def nodes_of(run_dir, ids: list[str]) -> Counter:
    """How many episodes ran on each node (the node id is in each episode_start)."""
    starts = [json.loads((run_dir / "episodes" / "mini" / f"{i}.jsonl").read_text().splitlines()[0]) for i in ids]
    return Counter(start["ray_node"] for start in starts)


def wait_for_rows(path, count: int) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(rows_of(path)) < count:
        time.sleep(0.05)


def wait_for_an_episode_running_on(episodes: Path, node_id: str) -> None:
    """Until an episode's log says it started on `node_id` and has not ended yet."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        for path in episodes.glob("*.jsonl"):
            first, newline, rest = path.read_text().partition("\n")
            started_there = newline and json.loads(first).get("ray_node") == node_id  # a whole first line only
            if started_there and '"episode_end"' not in rest:
                return
        time.sleep(0.05)
    raise AssertionError(f"no episode ran on node {node_id} within 120 s")


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


def test_epochs_of_one_task_are_distinct_episodes_on_the_cluster(cluster, mini):
    ids = many_tasks(mini, 2)
    on_ray = mini.run(
        "--model",
        mini.script(SLOW_EPISODE),
        "--executor",
        "ray",
        "--ray-address",
        cluster[0].address,
        "--epochs",
        "3",
        run_id="ray-epochs",
    )
    assert on_ray.exit_code == 0, on_ray.output
    assert sorted((row["task_id"], row["epoch"]) for row in on_ray.rows) == [(i, e) for i in ids for e in (1, 2, 3)]
    for path in (on_ray.run_dir / "episodes" / "mini").glob("*.jsonl"):  # each epoch's events in its own file
        events = [json.loads(line)["event"] for line in path.read_text().splitlines()]
        assert events.count("episode_start") == 1 and events[-1] == "episode_end"
    assert len(list((on_ray.run_dir / "episodes" / "mini").glob("*.jsonl"))) == 6


def test_the_connection_bound_holds_across_the_cluster(cluster, mini):
    many_tasks(mini, 8)
    server = ScriptedOpenAIServer()
    server.push(*[reply(text="<answer>42</answer>") for _ in range(8)])
    for step in server.steps:
        step.delay_s = 0.4
    server.start()
    try:
        outcome = mini.run(
            "--model",
            "openai/test-model",
            "--api-base",
            server.url,
            "--executor",
            "ray",
            "--ray-address",
            cluster[0].address,
            "--max-connections",
            "2",
            run_id="bound",
        )
    finally:
        server.stop()
    assert outcome.exit_code == 0, outcome.output
    assert [row["status"] for row in outcome.rows] == ["answered"] * 8
    assert server.max_concurrent == 2  # four sandboxes on two nodes, never more than two calls in flight


def test_the_spend_cap_holds_across_the_cluster(cluster, mini):
    many_tasks(mini, 8)
    server = ScriptedOpenAIServer()
    server.push(*[reply("<answer>42</answer>", prompt_tokens=100000) for _ in range(8)])
    server.start()
    try:
        outcome = mini.run(
            "--model",
            "openai/gpt-5",
            "--api-base",
            server.url,
            "--executor",
            "ray",
            "--ray-address",
            cluster[0].address,
            "--max-cost",
            "0.01",
            run_id="capped",
        )
    finally:
        server.stop()
    assert outcome.exit_code == 0, outcome.output
    # at most the four that could start before any cost came in (two sandboxes on each node) ran; no node
    # started one after the first episode's cost reached the cap
    assert 1 <= len(outcome.rows) <= 4 and all(row["cost_usd"] > 0.01 for row in outcome.rows)
    assert f"{8 - len(outcome.rows)} episodes not started" in outcome.output


def ray_command(mini, script: str, run_id: str, address: str) -> list[str]:
    return command(mini, script, run_id, "--executor", "ray", "--ray-address", address)


def test_a_node_lost_mid_batch_loses_and_duplicates_nothing(cluster, mini):
    head, workers = cluster
    ids = many_tasks(mini, 12)
    script = mini.script([{"bash": "sleep 1"}, "<answer>42</answer>"])
    results = mini.results_dir / "lost" / "results.jsonl"
    driver = subprocess.Popen(
        ray_command(mini, script, "lost", head.address),
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_rows(results, 2)
    lost = workers.pop()
    wait_for_an_episode_running_on(mini.results_dir / "lost" / "episodes" / "mini", lost.node_id)
    head.remove_node(lost)  # its running episodes die with it
    workers.append(worker_node(head))  # back for the next tests
    _, errors = driver.communicate(timeout=180)
    assert driver.returncode == 0, errors
    rows = rows_of(results)
    assert sorted(row["task_id"] for row in rows) == ids  # each task exactly once
    assert {row["status"] for row in rows} == {"answered"}
    rerun = list((mini.results_dir / "lost" / "episodes" / "mini" / "previous").glob("*.jsonl"))
    assert rerun  # the lost attempts' partial trajectories, kept apart
    for path in rerun:  # an attempt may have logged its end on the node just before the node went, unreported
        events = [json.loads(line) for line in path.read_text().splitlines()]
        assert events[0]["ray_node"] == lost.node_id


def test_kill_9_of_the_driver_then_resume(cluster, mini):
    address = cluster[0].address
    ids = many_tasks(mini, 10)
    script = mini.script(SLOW_EPISODE)
    results = mini.results_dir / "killed" / "results.jsonl"
    driver = subprocess.Popen(
        ray_command(mini, script, "killed", address),
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    wait_for_rows(results, 3)
    os.killpg(driver.pid, signal.SIGKILL)
    driver.wait()
    finished = [line for line in results.read_text().splitlines(keepends=True) if line.endswith("\n")]
    assert 3 <= len(finished) < len(ids)
    resumed = subprocess.run(
        ray_command(mini, script, "killed", address), cwd=REPO, capture_output=True, text=True, timeout=180
    )
    assert resumed.returncode == 0, resumed.stderr
    assert results.read_text().splitlines(keepends=True)[: len(finished)] == finished  # nothing finished lost
    rows = rows_of(results)
    assert sorted(row["task_id"] for row in rows) == ids  # and nothing repeated
    assert [row["detail"] for row in rows if row["status"] != "answered"] == []


def test_a_node_with_another_collection_refuses_naming_itself(cluster, mini, monkeypatch):
    many_tasks(mini, 2)
    # the driver sees another collection than the nodes (which hash their own copy before their first episode)
    monkeypatch.setattr("harness.inputs.collections.hashing.CollectionFiles.digest", "sha256-tree:the-drivers-copy")
    outcome = mini.run(
        "--model",
        mini.script(["<answer>42</answer>"]),
        "--executor",
        "ray",
        "--ray-address",
        cluster[0].address,
        run_id="refused",
    )
    assert outcome.exit_code == 2
    assert "error: node 127.0.0.1 (node id " in outcome.output
    assert "the driver's has sha256-tree:the-drivers-copy" in outcome.output
    assert outcome.rows == []


def test_ctrl_c_cancels_the_episodes_on_every_node(cluster, mini):
    many_tasks(mini, 8)
    script = mini.script([{"bash": "sleep 120"}, "<answer>42</answer>"])
    run_dir = mini.results_dir / "stopped"
    driver = subprocess.Popen(
        ray_command(mini, script, "stopped", cluster[0].address),
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(run_dir.glob("episodes/mini/*.jsonl"))) < 4:
        time.sleep(0.05)  # four episodes running, two on each node
    time.sleep(1)  # their commands started
    driver.send_signal(signal.SIGINT)
    _, errors = driver.communicate(timeout=60)
    assert driver.returncode == 130, errors
    rows = rows_of(run_dir / "results.jsonl")
    assert [row["status"] for row in rows] == ["cancelled"] * 4  # the queued four never started
    assert len(nodes_of(run_dir, [row["task_id"] for row in rows])) == 2


def test_infrastructure_failures_run_again_on_the_cluster_as_locally(cluster, mini):
    from tests.run.test_infrastructure_retries import failing_first_attempts, write_tasks

    write_tasks(mini, 4)
    outcomes = {}
    for executor in ("ray", "local"):
        server = ScriptedOpenAIServer()
        server.respond = failing_first_attempts("t2", 2)
        server.start()
        try:
            outcomes[executor] = mini.run(
                "--model",
                "openai/test-model",
                "--api-base",
                server.url,
                "--executor",
                executor,
                "--ray-address",
                cluster[0].address,
                "--retry-errors",
                "2",
                "--max-retries",
                "0",  # the 503s end their episodes, which run again
                "--workers",
                "2",
                run_id=f"retried-{executor}",
            )
        finally:
            server.stop()
    on_ray, local = outcomes["ray"], outcomes["local"]
    assert on_ray.exit_code == local.exit_code == 0, on_ray.output
    attempts = {row["task_id"]: (row["status"], row["attempt"]) for row in on_ray.rows}
    assert attempts == {row["task_id"]: (row["status"], row["attempt"]) for row in local.rows}
    assert attempts["t2"] == ("answered", 3) and len(on_ray.rows) == 4
    previous = sorted(p.name for p in (on_ray.run_dir / "episodes" / "mini" / "previous").iterdir())
    assert previous == ["t2.1.jsonl", "t2.2.jsonl"]


def test_a_sweep_on_the_cluster_gives_the_rows_of_a_local_sweep(cluster, mini):
    many_tasks(mini, 4)
    models = ",".join(mini.script(SLOW_EPISODE if n == "a" else ["<answer>41</answer>"]) for n in "ab")
    on_ray = mini.run("--model", models, "--executor", "ray", "--ray-address", cluster[0].address, run_id="sweep-ray")
    local = mini.run("--model", models, "--workers", "2", run_id="sweep-local")
    assert on_ray.exit_code == local.exit_code == 0, on_ray.output
    import yaml

    ray_runs, local_runs = (
        [
            outcome.run_dir / run["run_id"]
            for run in yaml.safe_load((outcome.run_dir / "sweep.yaml").read_text())["runs"]
        ]
        for outcome in (on_ray, local)
    )
    assert [p.name for p in ray_runs] == [p.name for p in local_runs] and len(ray_runs) == 2
    for ray_run, local_run in zip(ray_runs, local_runs, strict=True):
        assert comparable(rows_of(ray_run / "results.jsonl")) == comparable(rows_of(local_run / "results.jsonl"))
        assert len(rows_of(ray_run / "results.jsonl")) == 4
    workers = {node.node_id for node in cluster[1]}
    starts = [json.loads(p.read_text().splitlines()[0]) for p in on_ray.run_dir.glob("*/episodes/mini/*.jsonl")]
    assert {start["ray_node"] for start in starts} <= workers and len(starts) == 8


def test_a_providers_adaptive_limit_is_the_clusters_in_the_coordinator(cluster, mini):
    """Both nodes' calls go through one gate: it sees every 429 the server sent, and its limit came down."""
    from tests.helpers.openai_server import two_step_agent
    from tests.models.test_adaptive_concurrency import provider_line

    many_tasks(mini, 12)
    server = ScriptedOpenAIServer()
    server.respond, server.reply_delay_s, server.concurrency_limit = two_step_agent, 0.3, 2
    server.start()
    try:
        outcome = mini.run(
            "--model",
            "openai/test-model",
            "--api-base",
            server.url,
            "--executor",
            "ray",
            "--ray-address",
            cluster[0].address,
            "--workers",
            "4",
            "--max-connections",
            "4",
            "--max-retries",
            "20",
            run_id="gated",
        )
    finally:
        server.stop()
    assert outcome.exit_code == 0, outcome.output
    assert [row["status"] for row in outcome.rows] == ["answered"] * 12
    limit, maximum, rate_limited = map(int, provider_line(outcome.output).groups())
    assert rate_limited == server.refused > 0  # the driver's line counts both nodes' 429s: one gate
    assert maximum == 4 and limit < 4


def test_sandbox_creations_on_every_node_keep_the_plans_rate_together(cluster):
    """Each node's E2B creations wait for a turn from the run's coordinator: turns taken on two nodes at once
    are the plan's interval apart (each node pacing alone would let both create at the same moment)."""
    from harness.run.executors.coordinator import CoordinatorPacer, RunCoordinator

    coordinator = ray.remote(RunCoordinator).options(num_cpus=0, max_concurrency=8).remote(4, None)

    @ray.remote(num_cpus=0, resources={SANDBOX_RESOURCE: 1}, scheduling_strategy="SPREAD")
    def take_turns(coordinator) -> tuple[str, list[float]]:
        import threading as node_threading

        pacer, cancel = CoordinatorPacer(coordinator, 5.0), node_threading.Event()
        times = []
        for _ in range(3):
            assert pacer.wait_turn(cancel)
            times.append(time.time())
        return ray.get_runtime_context().get_node_id(), times

    results = ray.get([take_turns.remote(coordinator) for _ in range(2)])
    turns = sorted(moment for _, times in results for moment in times)
    gaps = [later - earlier for earlier, later in itertools.pairwise(turns)]
    assert len({node for node, _ in results}) == 2  # two nodes
    assert min(gaps) >= 0.2 * 0.9, gaps  # 5 creations a second for both together


def test_a_node_builds_the_model_factory_once_per_run_not_per_episode(cluster, mini):
    """Three episodes of one run in one worker process of a node: the run's model factory is built there once
    (with the node's checks), and every episode takes its model from it."""
    from ray.util.queue import Queue

    from harness.core.status import Status
    from harness.episode.settings import EpisodeSettings
    from harness.inputs.config import RunConfig
    from harness.records.episode_log import RunFacts
    from harness.run.executors.coordinator import RunCoordinator
    from harness.run.executors.ray_node import NodeSpec
    from harness.run.planning.plan import plan_run

    many_tasks(mini, 3)
    collections, results = mini.root / "collections", mini.results_dir
    config = RunConfig(
        model=mini.script(["<answer>42</answer>"]),
        domain="mini",
        tasks_dir=mini.tasks_dir,
        collections_dir=collections,
        results_dir=results,
        run_id="factory-once",
    )
    plan = plan_run(config)
    plan.lock.release()
    facts, hashes = plan.backend.facts, plan.collection_hashes
    settings = EpisodeSettings.of(config, 4096, plan.solver)
    spec = NodeSpec(config, settings, plan.run_id, RunFacts("sha256:0", "test"), hashes, facts, plan.invocation)
    coordinator = ray.remote(RunCoordinator).options(num_cpus=0, max_concurrency=8).remote(4, None)
    events = Queue(actor_options={"num_cpus": 0})

    @ray.remote(num_cpus=0, resources={SANDBOX_RESOURCE: 1})
    def episodes_in_one_process(tasks):
        from harness.run.executors import ray_node as node

        real, builds = node.model_factory, []

        def counted(*arguments):
            builds.append(1)
            return real(*arguments)

        node.model_factory = counted
        try:
            return [node.run_on_node(task, spec, coordinator, events, 1) for task in tasks], len(builds)
        finally:
            node.model_factory = real

    rows, builds = ray.get(episodes_in_one_process.remote(plan.pending))
    assert [row.status for row in rows] == [Status.ANSWERED] * 3
    assert builds == 1


FOUR_CALLS = ("--max-connections", "4")


def test_ctrl_c_abandons_model_calls_on_every_node_a_server_never_answers(cluster, mini):
    many_tasks(mini, 4)
    server = SilentServer()
    server.start()
    run_dir = mini.results_dir / "hung"
    try:
        driver = subprocess.Popen(
            [*ray_command(mini, "openai/x", "hung", cluster[0].address), *("--api-base", server.url), *FOUR_CALLS],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        waiting = "four episodes, two on each node, waiting on their model call"
        wait_until(lambda: server.waiting == 4 or driver.poll() is not None, waiting, within_s=900)
        elapsed, errors = stop_with_ctrl_c(driver)
        wait_until(lambda: server.closed_by_client == 4, "the four connections closed", within_s=30)
    finally:
        server.stop()
    assert driver.returncode == 130, errors
    assert elapsed < 4 * CTRL_C_BOUND_S, f"{elapsed:.1f} s"
    rows = rows_of(run_dir / "results.jsonl")
    assert [row["status"] for row in rows] == ["cancelled"] * 4
    assert len(nodes_of(run_dir, [row["task_id"] for row in rows])) == 2
