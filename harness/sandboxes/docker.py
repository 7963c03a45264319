"""The Docker sandbox: one container per episode from the recipe image, each command a `docker exec`.

The container keeps `sleep infinity` (root, under docker-init) alive; commands run as the `agent` user
through `harness-exec`, which enforces the time limit inside the container and kills every process the
command left behind, so a timeout takes the whole tree down, not just the client.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from pathlib import Path
from typing import Any

from harness.sandboxes import (
    IMAGE_PATH,
    ExecResult,
    SandboxError,
    SandboxSettings,
    sandbox_environment,
)
from harness.sandboxes.limits import ResourceLimits
from harness.sandboxes.output import HeadTail, capped_result, harness_exec_timed_out

LABEL_RUN, LABEL_EPISODE, LABEL_OWNER = "harness.run", "harness.episode", "harness.owner"
AGENT = "agent"
_GRACE_S = 30.0
_POLL_S = 0.2


def owner_label() -> str:
    """`host:pid` of this runner, so a later cleanup can tell orphans of dead runs from live ones."""
    return f"{socket.gethostname()}:{os.getpid()}"


def owner_is_dead(owner: str) -> bool:
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False  # another machine's run: not ours to judge
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def cleanup_orphans(client: Any) -> list[str]:
    """Remove harness containers whose runner process is gone; returns their names."""
    removed = []
    for container in client.containers.list(all=True, filters={"label": LABEL_RUN}):
        if owner_is_dead(container.labels.get(LABEL_OWNER, "")):
            container.remove(force=True)
            removed.append(container.name)
    return removed


def docker_facts(image: str, image_id: str | None, limits: ResourceLimits) -> dict[str, Any]:
    """What run.yaml and each trajectory record about a Docker sandbox."""
    return {
        "backend": "docker",
        "image": image,
        "image_id": image_id,
        "limits": {"mechanism": "docker", "memory_mb": limits.memory_mb, "pids": limits.pids, "cpus": limits.cpus},
    }


class DockerSandbox:
    def __init__(
        self,
        client: Any,
        image: str,
        collection: Path,
        run_id: str,
        episode_name: str,
        settings: SandboxSettings,
        cancel: threading.Event | None = None,
    ):
        self._client = client
        self._image = image
        self._collection = collection.resolve()
        self._labels = {LABEL_RUN: run_id, LABEL_EPISODE: episode_name, LABEL_OWNER: owner_label()}
        self._settings = settings
        self._cancel = cancel or threading.Event()
        self._container: Any = None

    def describe(self) -> dict[str, object]:
        image_id = self._container.attrs.get("Image") if self._container is not None else None
        return docker_facts(self._image, image_id, self._settings.limits)

    def start(self) -> None:
        limits = self._settings.limits
        try:
            self._container = self._client.containers.run(
                self._image,
                ["sleep", "infinity"],
                detach=True,
                init=True,
                user="0:0",
                hostname="sandbox",
                working_dir="/workspace",
                environment=sandbox_environment(IMAGE_PATH),
                labels=self._labels,
                network_mode="none",
                read_only=True,
                tmpfs={
                    "/tmp": f"rw,mode=1777,size={limits.disk_mb}m",
                    "/workspace/run": f"rw,uid=1000,gid=1000,mode=0755,size={limits.disk_mb}m",
                },
                volumes={str(self._collection): {"bind": "/workspace/documents", "mode": "ro"}},
                mem_limit=f"{limits.memory_mb}m",
                memswap_limit=f"{limits.memory_mb}m",
                nano_cpus=int(limits.cpus * 1e9),
                pids_limit=limits.pids,
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
            )
        except Exception as error:  # docker.errors.* and connection failures alike
            raise SandboxError(f"cannot start a container from {self._image}: {error}") from error

    def execute(self, command: str, timeout_s: float) -> ExecResult:
        if self._container is None:
            raise SandboxError("sandbox not started")
        api = self._client.api
        limit = max(timeout_s, 0.01)
        stdout, stderr = HeadTail(self._settings.output_limit_bytes), HeadTail(self._settings.output_limit_bytes)
        started = time.monotonic()
        try:
            exec_id = api.exec_create(
                self._container.id, ["harness-exec", f"{limit:.3f}", command], user=AGENT, workdir="/workspace"
            )["Id"]
            stream = api.exec_start(exec_id, stream=True, demux=True)
        except Exception as error:
            raise SandboxError(f"docker exec failed: {error}") from error
        reader = threading.Thread(target=_drain, args=(stream, stdout, stderr), daemon=True)
        reader.start()
        killed = False
        while reader.is_alive():
            if self._cancel.is_set() and not killed:
                self._container.exec_run(["pkill", "-KILL", "-u", AGENT], user=AGENT)
                killed = True
            elif time.monotonic() - started > limit + _GRACE_S:
                raise SandboxError("harness-exec did not stop the command in time")
            reader.join(_POLL_S)
        duration = time.monotonic() - started
        code = None if self._cancel.is_set() else api.exec_inspect(exec_id)["ExitCode"]
        return capped_result(stdout, stderr, code, harness_exec_timed_out(code, duration, limit), duration)

    def close(self) -> None:
        if self._container is not None:
            with contextlib.suppress(Exception):  # already gone (daemon restart, another runner's cleanup)
                self._container.remove(force=True)
            self._container = None


def _drain(stream: Any, stdout: HeadTail, stderr: HeadTail) -> None:
    for out, err in stream:
        if out:
            stdout.feed(out)
        if err:
            stderr.feed(err)
