"""Docker: nothing a command starts survives it, and an image without the recipe is refused at start.

tests/test_docker_execd.py covers the command server itself."""

from __future__ import annotations

import io
import socket

import pytest

import harness.sandboxes.docker as docker_backend
from harness.sandboxes import SandboxSettings
from harness.sandboxes.docker import LABEL_RUN, DockerSandbox, cleanup_orphans

DEAD_OWNER = f"{socket.gethostname()}:{2**22 + 12345}"  # above pid_max's default: never a live process


BROKEN = {
    "no-harness-execd": ("RUN rm /usr/local/bin/harness-execd", "harness-execd"),
    "no-agent-user": ("RUN /usr/sbin/userdel agent", "unable to find user agent"),
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
        processes = box.execute("ps -u agent -o comm=", 10)
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
        box._container.exec_run(["sleep", "4231"], user="agent", detach=True)
        processes = box.execute("ps -u agent -o comm=", 10)
    finally:
        box.close()
    assert processes.exit_code == 0 and "sleep" not in processes.stdout.split()
