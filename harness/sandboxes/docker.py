"""The Docker sandbox: one container per episode from the recipe image, each command a `docker exec`.

The container keeps `sleep infinity` (root, under docker-init) alive; commands run as the `agent` user
through `harness-exec`, which enforces the time limit inside the container and kills every process the
command left behind, so a timeout takes the whole tree down, not just the client. A second exec then
kills every `agent` process from outside, for a command that killed its own `harness-exec`.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker.errors

from harness.errors import InputError
from harness.sandboxes import (
    IMAGE_PATH,
    ExecResult,
    SandboxError,
    SandboxSettings,
    sandbox_environment,
)
from harness.sandboxes.limits import ResourceLimits
from harness.sandboxes.output import HeadTail
from harness.sandboxes.remote_exec import (
    AGENT,
    AGENT_UID,
    KILL_AGENT_PROCESSES,
    LABEL_EPISODE,
    LABEL_OWNER,
    LABEL_RUN,
    harness_exec_argv,
    owner_is_dead,
    owner_label,
    run_remote,
)

_PROBE = "echo harness-exec works"


def cleanup_orphans(client: Any) -> list[str]:
    """Remove harness containers whose runner process is gone; returns their names."""
    removed = []
    for container in client.containers.list(all=True, filters={"label": LABEL_RUN}):
        if owner_is_dead(container.labels.get(LABEL_OWNER, "")):
            try:
                container.remove(force=True)
            except docker.errors.APIError as error:  # NotFound is one too
                if error.status_code not in (404, 409):  # another runner's cleanup removed it, or is removing it
                    raise
                continue
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
        self._command: _DockerCommand | None = None

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
                    "/workspace/run": f"rw,uid={AGENT_UID},gid={AGENT_UID},mode=0755,size={limits.disk_mb}m",
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
        return run_remote(
            lambda limit: self._start(command, limit), self._sweep, timeout_s, self._settings, self._cancel
        )

    def _start(self, command: str, limit_s: float) -> _DockerCommand:
        api = self._client.api
        try:
            exec_id = api.exec_create(
                self._container.id, harness_exec_argv(command, limit_s), user=AGENT, workdir="/workspace"
            )["Id"]
            stream = api.exec_start(exec_id, stream=True, demux=True)
        except Exception as error:
            raise SandboxError(f"docker exec failed: {error}") from error
        self._command = _DockerCommand(api, exec_id, stream, self._kill_agent_processes)
        return self._command

    def _sweep(self) -> None:
        """After a command: a second exec kills what is left, unless harness-exec finished its own sweep.

        harness-exec exits below 128 only by itself, after killing every other agent process; at 128 and
        above it may have been killed by the command (`pkill harness-exec`), leaving children running.
        Skipping the exec saves three API round trips per step; were harness-exec ever made to exit low
        without sweeping, the next command's harness-exec still kills the leftovers before it starts.
        """
        code = self._command.exit_code if self._command is not None else None
        self._command = None
        if code is None or code >= 128:
            self._kill_agent_processes()

    def _kill_agent_processes(self) -> None:
        """SIGKILL every process of the agent user, from a second exec (`kill -1` spares only itself)."""
        try:
            code, output = self._container.exec_run(list(KILL_AGENT_PROCESSES), user=AGENT)
        except Exception as error:
            raise SandboxError(f"docker exec failed: {error}") from error
        if code not in (0, 1):  # 1: nothing left to kill
            raise SandboxError(f"cannot kill the agent's processes: {output.decode(errors='replace').strip()}")

    def close(self) -> None:
        if self._container is not None:
            with contextlib.suppress(Exception):  # already gone (daemon restart, another runner's cleanup)
                self._container.remove(force=True)
            self._container = None


@dataclass
class _DockerCommand:
    api: Any
    exec_id: str
    stream: Any
    kill: Callable[[], None]
    """Kills every agent process: Docker has no call that signals one exec."""
    exit_code: int | None = None

    def wait(self, stdout: HeadTail, stderr: HeadTail) -> int | None:
        for out, err in self.stream:
            if out:
                stdout.feed(out)
            if err:
                stderr.feed(err)
        self.exit_code = self.api.exec_inspect(self.exec_id)["ExitCode"]
        return self.exit_code


def check_image(client: Any, image: str) -> None:
    """Refuse an image that cannot run a command the way every episode does (`harness-exec` as `agent`)."""
    container = None
    try:
        container = client.containers.create(
            image, harness_exec_argv(_PROBE, 10), user=AGENT, working_dir="/workspace", network_mode="none",
            labels={LABEL_RUN: "image-check", LABEL_OWNER: owner_label()},
        )  # fmt: skip
        container.start()
        container.wait(timeout=60)
        output = container.logs(stdout=True, stderr=True).decode(errors="replace").strip()
    except Exception as error:  # docker.errors.APIError ("unable to find user agent"), timeouts
        output = str(getattr(error, "explanation", None) or error)
    finally:
        if container is not None:
            with contextlib.suppress(Exception):
                container.remove(force=True)
    if output != _PROBE.removeprefix("echo "):
        detail = output.splitlines()[-1] if output else "no output"
        raise InputError(
            f"--image {image}: cannot run `harness-exec` as user {AGENT} in /workspace ({detail}); "
            "use an image built from sandbox_templates/ (`python -m harness sandbox build docker`) or derived from it"
        )
