"""Docker: nothing a command starts survives it, an image without the recipe is refused at start, and what
the agent's own use of memory and scratch space does ends as the agent's outcome, never as sandbox_error.

tests/sandboxes/test_docker_execd.py covers the command server itself."""

from __future__ import annotations

import io
import socket

import pytest

import harness.sandboxes.docker.sandbox as docker_backend
from harness.sandboxes.base import SandboxLimitHit, SandboxSettings
from harness.sandboxes.docker.sandbox import LABEL_RUN, DockerSandbox, cleanup_orphans
from harness.sandboxes.limits import ResourceLimits

DEAD_OWNER = f"{socket.gethostname()}:{2**22 + 12345}"  # above pid_max's default: never a live process


BROKEN = {
    "no-harness-execd": ("RUN rm /usr/local/bin/harness-execd", "harness-execd"),
    "no-agent-user": ("RUN /usr/sbin/userdel agent", "unable to find user agent"),
    "own-tmp-folder": ("RUN rm /tmp && mkdir -m 1777 /tmp", "cannot touch '/tmp/.probe': Read-only file system"),
}


@pytest.fixture(scope="module", params=sorted(BROKEN))
def broken_image(request, docker_image):
    """An image derived from the recipe's with one part removed, and what the refusal must mention."""
    client, image = docker_image
    change, reason = BROKEN[request.param]
    tag = f"harness-test-{request.param}:latest"
    client.images.build(fileobj=io.BytesIO(f"FROM {image}\nUSER root\n{change}\n".encode()), tag=tag, rm=True)
    yield tag, reason
    client.images.remove(tag, force=True)


def test_an_image_without_the_recipe_is_refused_before_anything_is_written(mini, docker_image, broken_image):
    image, reason = broken_image
    outcome = mini.run("--model", "oracle", "--sandbox", "docker", "--image", image)
    assert outcome.exit_code == 2
    [line] = [text for text in outcome.output.splitlines() if text.strip()]
    assert f"--image {image}: cannot run commands through `/usr/local/bin/harness-execd`" in line and reason in line
    assert not outcome.run_dir.exists()
    client, _ = docker_image
    assert client.containers.list(all=True, filters={"label": f"{LABEL_RUN}=image-check"}) == []


def test_cleanup_skips_orphans_another_runner_removed_meanwhile(docker_image, tmp_path, monkeypatch):
    client, image = docker_image
    monkeypatch.setattr(docker_backend, "owner_label", lambda: DEAD_OWNER)
    orphan = DockerSandbox(client, image, tmp_path, "race-run", "orphan", SandboxSettings())
    orphan.start()
    listed = client.containers.list(all=True, filters={"label": f"{LABEL_RUN}=race-run"})
    orphan.close()  # what a concurrent `sandbox cleanup` does between our list and our remove

    class ListedBeforeTheRemoval:
        containers = type("Containers", (), {"list": lambda self, **filters: listed})()

    assert len(listed) == 1 and cleanup_orphans(ListedBeforeTheRemoval()) == []


def test_commands_cost_no_docker_exec_of_their_own(docker_image, tmp_path, monkeypatch):
    client, image = docker_image
    box = DockerSandbox(client, image, tmp_path, "exec-count", "ep", SandboxSettings())
    box.start()
    created = []
    exec_create = client.api.exec_create
    monkeypatch.setattr(client.api, "exec_create", lambda *a, **k: created.append(a) or exec_create(*a, **k))
    try:
        result = box.execute("sleep 4230 > /dev/null 2>&1 & echo started", 10)
        processes = box.execute('ps -u "$(id -u)" -o comm=', 10)
    finally:
        box.close()
    assert result.stdout == "started\n" and "sleep" not in processes.stdout.split()
    assert created == []  # both went to the episode's harness-execd


def test_agent_processes_left_from_before_are_gone_when_a_command_starts(docker_image, tmp_path):
    client, image = docker_image
    box = DockerSandbox(client, image, tmp_path, "leftover", "ep", SandboxSettings())
    box.start()
    try:
        # as if an earlier command's final sweep had missed it
        box._container.exec_run(["sleep", "4231"], user=str(box._uid), detach=True)
        processes = box.execute('ps -u "$(id -u)" -o comm=', 10)
    finally:
        box.close()
    assert processes.exit_code == 0 and "sleep" not in processes.stdout.split()


def test_run_tmp_and_dev_shm_share_one_disk_cap_below_the_memory_limit(docker_image, tmp_path):
    client, image = docker_image
    settings = SandboxSettings(ResourceLimits(memory_mb=160, disk_mb=64))
    box = DockerSandbox(client, image, tmp_path, "one-cap", "ep", settings)
    box.start()
    try:  # three caps of 64 MB each were 192 MB of tmpfs: past the memory limit, the container was killed
        filled = box.execute(
            "head -c 64M /dev/zero > /tmp/a; head -c 64M /dev/zero > run/b; head -c 32M /dev/zero > /dev/shm/c; "
            "cat /tmp/a run/b /dev/shm/c | wc -c",
            60,
        )
        after = box.execute("echo alive", 10)
    finally:
        box.close()
    assert "No space left on device" in filled.stderr and int(filled.stdout) <= 64 << 20
    assert after.stdout == "alive\n"


def test_python_multiprocessing_works_with_dev_shm_on_the_scratch_space(docker_image, tmp_path):
    client, image = docker_image
    box = DockerSandbox(client, image, tmp_path, "shm", "ep", SandboxSettings())
    box.start()
    program = (
        "import multiprocessing as mp, multiprocessing.shared_memory as sm; lock = mp.Lock(); "
        "block = sm.SharedMemory(create=True, size=1 << 20); print(mp.Pool(2).map(abs, [-1, -2])); block.unlink()"
    )
    try:
        result = box.execute(f"python3 -c '{program}' && ls -d /dev/shm/. && df --output=target /dev/shm/.", 60)
    finally:
        box.close()
    assert result.stdout.split() == ["[1,", "2]", "/dev/shm/.", "Mounted", "on", "/workspace"], result.stderr


SMALL = ResourceLimits(memory_mb=256, disk_mb=64)
MANY_SMALL = "for i in $(seq 40); do (head -c 8M /dev/zero; sleep 3) | tail -c 8M >/dev/null & done; wait"
"""40 `tail`s holding about 9 MB each for 3 s: past the 256 MB limit, each smaller than harness-execd (11 MB),
which the OOM killer, going by size alone, would kill first."""


def small_box(docker_image, tmp_path, name):
    client, image = docker_image
    return DockerSandbox(client, image, tmp_path, "memory", name, SandboxSettings(SMALL))


def test_an_allocation_past_the_memory_limit_kills_only_the_command(docker_image, tmp_path):
    box = small_box(docker_image, tmp_path, "bytearray")
    box.start()
    try:
        result = box.execute("python3 -c 'b = bytearray(400 << 20); print(len(b))'", 60)
        after = box.execute("echo alive", 10)
    finally:
        box.close()
    assert result.exit_code == 137 and result.stdout == ""
    assert after.stdout == "alive\n"


def test_many_small_processes_past_the_memory_limit_are_killed_before_the_server(docker_image, tmp_path):
    box = small_box(docker_image, tmp_path, "many")
    box.start()
    try:
        result = box.execute(f"{MANY_SMALL}; echo waited", 60)
        after = box.execute("echo alive", 10)
    finally:
        box.close()
    assert result.stdout == "waited\n" and after.stdout == "alive\n"


def test_a_server_killed_for_memory_is_the_memory_limit_hit_not_a_sandbox_error(docker_image, tmp_path):
    box = small_box(docker_image, tmp_path, "server")
    box.start()
    try:
        with pytest.raises(SandboxLimitHit, match="memory limit was hit: 256 MB") as hit:
            # the agent may undo its commands' precedence with the OOM killer, back to the server's own score
            box.execute(f"echo 0 > /proc/self/oom_score_adj; {MANY_SMALL}", 120)
    finally:
        box.close()
    assert hit.value.limit == "memory"


def test_an_episode_whose_memory_use_killed_its_server_ends_as_sandbox_limit_and_is_not_run_again(mini, docker_image):
    _, image = docker_image
    script = mini.script([{"bash": f"echo 0 > /proc/self/oom_score_adj; {MANY_SMALL}"}, "<answer>42</answer>"])
    arguments = ("--model", script, "--sandbox", "docker", "--image", image, "--memory-mb", "256", "--disk-mb", "64")
    outcome = mini.run(*arguments)
    [row] = outcome.rows
    assert row["status"] == "sandbox_limit" and "memory limit" in row["detail"], row
    events = outcome.trajectory("t1")
    resumed = mini.run(*arguments)
    assert resumed.exit_code == 0 and resumed.rows == outcome.rows and resumed.trajectory("t1") == events


def test_a_fork_bomb_fills_the_pid_limit_and_the_next_command_runs(docker_image, tmp_path):
    client, image = docker_image
    box = DockerSandbox(client, image, tmp_path, "pids", "bomb", SandboxSettings(ResourceLimits(pids=128)))
    box.start()
    try:
        bombed = box.execute("bomb() { bomb | bomb & }; bomb; sleep 2; echo still here", 30)
        after = box.execute('echo alive; ps -u "$(id -u)" -o pid=,ppid=,comm=; true', 10)
    finally:
        box.close()
    assert "Resource temporarily unavailable" in bombed.stderr and bombed.stdout == "still here\n"
    # the bomb's shells are gone: left are this command's shell and its ps (`; true` keeps bash from exec'ing
    # ps; no pipe, whose other side is named bash until it execs: a loaded machine caught that once)
    alive, *listed = after.stdout.splitlines()
    processes = {pid: (parent, name) for pid, parent, name in (line.split() for line in listed)}
    [ps] = [pid for pid, (_, name) in processes.items() if name == "ps"]
    shell = processes[ps][0]
    assert alive == "alive" and processes.keys() == {ps, shell} and processes[shell][1] == "bash", after.stdout
