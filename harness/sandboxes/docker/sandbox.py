"""The Docker sandbox: one container per episode from the recipe image, its commands through one server.

The container keeps `sleep infinity` (root, under docker-init) alive. At start one attached `docker exec`
starts `harness-execd` (root) in it; each command is then a request to that server, which runs it as a
fresh `bash -c` process of the `agent` user, kills it at its time limit or on cancel, and kills every
`agent` process (background, detached, double-forked) before it answers, so nothing outlives its command.
A `docker exec` per command cost about 45 ms of engine and runc time; a request costs a few ms.

The container has no capabilities but the four the server needs: SETUID and SETGID to become `agent` (with
a uid drawn for the episode: `AGENT_UIDS`),
KILL to kill `agent`'s processes, CHOWN to give `agent` its `run/` at start. `agent` cannot obtain them: a
process's capabilities are cleared when all its uids become non-zero (the server's setuid, no keep-caps
bit, no ambient set), and `no-new-privileges` keeps any later exec (a setuid binary, file capabilities)
from granting them again. Nor can `agent` signal, trace or write to the root server, which frames every
byte a command prints. The container's seccomp profile is ours (`seccomp_profile.py`), whatever the engine's
version: no socket family but local and IP, no locks or watches on files another episode shares. The
machine's kernel counters a command could move and another container read are masked, /proc/stat is a quiet
copy, and no pty can be opened (`kernel_counters.py`).

Everything `agent` may write is on one tmpfs of `disk_mb` at /workspace, below the memory limit (the
config refuses a `disk_mb` not below it): the server makes `run/`, `.tmp/` (the image's /tmp links there)
and `.shm/` (/dev/shm; `--ipc none` mounts no other). A command's processes are the OOM killer's first
choice (the server starts them at oom_score_adj 1000), and the CPU scheduler's last (SCHED_IDLE, which the
agent cannot leave): the container's CPU quota is shared with the server, whose kills must not wait behind
the agent's busy loops. A server or container killed for memory all the same raises
`SandboxLimitHit("memory")`, the agent's outcome, and any other failure `SandboxError`.
"""

from __future__ import annotations

import contextlib
import random
import tempfile
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import docker.errors

from harness.core.errors import InputError
from harness.sandboxes.base import (
    DOCUMENTS,
    IMAGE_PATH,
    WORKDIR,
    ExecResult,
    SandboxError,
    SandboxLimitHit,
    SandboxSettings,
    sandbox_environment,
)
from harness.sandboxes.docker.execd import SERVER, ExecdConnection
from harness.sandboxes.docker.seccomp_profile import seccomp_profile
from harness.sandboxes.file_read import file_bytes, output_room, read_command
from harness.sandboxes.kernel_counters import HIDDEN_FILES, PROC_STAT, PTY_MULTIPLEXER, host_quiet_proc_stat
from harness.sandboxes.limits import ResourceLimits
from harness.sandboxes.model_socket import AGENT_FOLDER, MODEL_SOCKET_FOLDER
from harness.sandboxes.remote_exec import (
    AGENT,
    LABEL_EPISODE,
    LABEL_OWNER,
    LABEL_RUN,
    owner_is_dead,
    owner_label,
    run_remote,
)
from harness.sandboxes.tools import probe_command

_SERVER_CAPABILITIES = ["SETUID", "SETGID", "KILL", "CHOWN"]
AGENT_UIDS = range(2_000_000_000, 2_100_000_000)
"""The uids an episode's commands run as, one drawn at random per container: the kernel counts pipe buffers,
message-queue bytes and queued signals per uid for the whole machine (a uid over its pipe allowance gets 8 KB
pipes, which any process of it can see), and every container has the same `agent`. Above every account and
every local episode's host uid (/etc/subuid ranges, `local/uids.py`), below 2**31 (tools that read a uid as
signed); two of ten episodes at once draw the same one about once in two million runs."""
_MOBY_MASKED_PATHS = [
    "/proc/asound",
    "/proc/acpi",
    "/proc/interrupts",
    "/proc/kcore",
    "/proc/keys",
    "/proc/latency_stats",
    "/proc/timer_list",
    "/proc/timer_stats",
    "/proc/sched_debug",
    "/proc/scsi",
]
"""The engine's default masked paths under /proc (moby `oci/defaults.go`, with 2025's /proc/interrupts): a
container's `MaskedPaths` replaces them, so they are named again."""
MASKED_PATHS = list(dict.fromkeys([*_MOBY_MASKED_PATHS, *HIDDEN_FILES, PTY_MULTIPLEXER, "/sys"]))
"""Read as empty in the container: the engine's defaults, the machine's counters a command could move and
another episode read (`kernel_counters.py`), and /sys whole (its slab, NUMA node and block device counters
are the machine's; the local sandbox has no /sys either)."""
DISK_ENFORCEMENT = "one tmpfs of disk_mb at /workspace for run/, /tmp and /dev/shm together (folders of it)"
_OOM_WAIT_S = 2.0
"""How long a failed command waits for the engine to report an OOM kill in its container (it comes within
milliseconds of the kill); only a failure waits."""
_PROBE_ANSWER = "harness-execd works"
_PROBE = f"touch run/.probe /tmp/.probe /dev/shm/.probe && echo {_PROBE_ANSWER}"
"""A command as every episode runs it, writing where an agent may write (the scratch laid out by the server)."""


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
        "limits": {
            "mechanism": "docker",
            "memory_mb": limits.memory_mb,
            "pids": limits.pids,
            "cpus": limits.cpus,
            "disk_mb": limits.disk_mb,
            "disk": DISK_ENFORCEMENT,
        },
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
        self._server: ExecdConnection | None = None
        self._uid = random.choice(AGENT_UIDS)
        """The episode's own uid for `agent`'s commands (see AGENT_UIDS)."""
        self._quiet_stat: tempfile.TemporaryDirectory[str] | None = None
        """The quiet /proc/stat bound into the container (`kernel_counters.py`), removed with it."""
        self._socket_folder: Path | None = None
        """The host folder shown at /run/model (`mount_model_socket`), None: none."""
        self._agent_folder: Path | None = None
        """The host folder shown at /run/agent (`mount_agent`), None: none."""

    def describe(self) -> dict[str, object]:
        image_id = self._container.attrs.get("Image") if self._container is not None else None
        return docker_facts(self._image, image_id, self._settings.limits)

    def start(self) -> None:
        limits = self._settings.limits
        self._quiet_stat = tempfile.TemporaryDirectory(prefix="harness-proc-stat-")
        quiet_stat = Path(self._quiet_stat.name) / "stat"
        quiet_stat.write_text(host_quiet_proc_stat())
        quiet_stat.chmod(0o444)
        api = self._client.api
        try:
            host_config = api.create_host_config(
                init=True,
                network_mode="none",
                read_only=True,
                tmpfs={WORKDIR: f"rw,mode=0755,size={limits.disk_mb}m"},  # harness-execd lays it out
                ipc_mode="none",  # no /dev/shm mount of its own: harness-execd links it into the tmpfs
                binds={
                    str(self._collection): {"bind": DOCUMENTS, "mode": "ro"},
                    str(quiet_stat): {"bind": PROC_STAT, "mode": "ro"},
                    **self._host_binds(),
                },
                mem_limit=f"{limits.memory_mb}m",
                memswap_limit=f"{limits.memory_mb}m",
                nano_cpus=int(limits.cpus * 1e9),
                pids_limit=limits.pids,
                cap_drop=["ALL"],
                cap_add=_SERVER_CAPABILITIES,
                security_opt=["no-new-privileges", f"seccomp={seccomp_profile()}"],
            )
            host_config["MaskedPaths"] = MASKED_PATHS  # the API's field; docker-py has no argument for it
            created = api.create_container(
                self._image,
                ["sleep", "infinity"],
                detach=True,
                user="0:0",
                hostname="sandbox",
                working_dir=WORKDIR,
                environment=sandbox_environment(IMAGE_PATH),
                labels=self._labels,
                host_config=host_config,
            )
            self._container = self._client.containers.get(created["Id"])
            self._container.start()
        except Exception as error:  # docker.errors.* and connection failures alike
            raise SandboxError(f"cannot start a container from {self._image}: {error}") from error
        self._server = ExecdConnection.open(self._client.api, self._container.id, AGENT, self._uid, WORKDIR)

    def mount_model_socket(self, folder: Path) -> None:
        """Before `start`: FOLDER, read-only, at /run/model in the container (sandboxes/model_socket.py). The
        engine binds a path of this host: a remote or rootless engine does not see the runner's folder."""
        self._socket_folder = folder.resolve()

    def mount_agent(self, folder: Path) -> None:
        """Before `start`: FOLDER, an installed agent's own install on this host, read-only at /run/agent (a binary
        that runs on the image's libraries: Claude Code's)."""
        self._agent_folder = folder.resolve()

    def _host_binds(self) -> dict[str, dict[str, str]]:
        shown = {MODEL_SOCKET_FOLDER: self._socket_folder, AGENT_FOLDER: self._agent_folder}
        return {str(folder): {"bind": where, "mode": "ro"} for where, folder in shown.items() if folder is not None}

    def execute(self, command: str, timeout_s: float) -> ExecResult:
        return self._run(command, timeout_s, self._settings)

    def read_bytes(self, path: str, max_bytes: int, timeout_s: float) -> bytes:
        """A file as the agent sees it (sandboxes/file_read.py)."""
        settings = replace(self._settings, output_limit_bytes=2 * output_room(max_bytes))
        return file_bytes(self._run(read_command(path, max_bytes), timeout_s, settings), path, max_bytes)

    def _run(self, command: str, timeout_s: float, settings: SandboxSettings) -> ExecResult:
        if self._server is None:
            raise SandboxError("sandbox not started")
        server = self._server
        try:
            return run_remote(
                lambda limit: server.run(command, limit), _swept_by_the_server, timeout_s, settings, self._cancel
            )
        except SandboxError as error:
            if _killed_for_memory(self._client, self._container):  # the agent's own use: not retried
                raise SandboxLimitHit("memory", f"{self._settings.limits.memory_mb} MB ({error})") from None
            raise

    def close(self) -> None:
        if self._server is not None:
            with contextlib.suppress(OSError):
                self._server.close()
            self._server = None
        if self._container is not None:
            with contextlib.suppress(Exception):  # already gone (daemon restart, another runner's cleanup)
                self._container.remove(force=True)
            self._container = None
        if self._quiet_stat is not None:
            self._quiet_stat.cleanup()
            self._quiet_stat = None


def _killed_for_memory(client: Any, container: Any) -> bool:
    """Whether the kernel killed a process of `container` for want of memory in its cgroup during the episode:
    Docker's `State.OOMKilled` once it has exited, else an `oom` event of the container. The agent cannot kill
    the server itself, so a server that died after such a kill died of the agent's memory use; a kill from
    outside (`docker kill`, an engine restart) makes neither and stays a plain `SandboxError`."""
    try:
        container.reload()
        if container.attrs["State"].get("OOMKilled"):
            return True
        events = client.api.events(since=0, filters={"container": container.id, "event": "oom"}, decode=True)
    except Exception:  # docker.errors.*, the engine unreachable: no proof of anything
        return False
    timer = threading.Timer(_OOM_WAIT_S, events.close)  # the stream's past events come first, then it waits
    timer.start()
    try:
        return next(events, None) is not None
    except Exception:  # the stream cut at a bad moment
        return False
    finally:
        timer.cancel()
        with contextlib.suppress(Exception):
            events.close()


def _swept_by_the_server() -> None:
    """Nothing left to kill after a command: harness-execd killed every agent process before answering."""


def check_runnable_image(client: Any, image: str) -> ExecResult | None:
    """Refuse an image that cannot run a command the way every episode does (`harness-execd`, `agent`); the tool
    list's probe as it ran in the same container (None when it could not run: the run's tool check says why)."""
    tools = None
    with tempfile.TemporaryDirectory(prefix="harness-image-check-") as empty:
        box = DockerSandbox(client, image, Path(empty), "image-check", "probe", SandboxSettings())
        try:
            box.start()
            result = box.execute(_PROBE, 10)
            output = (result.stdout + result.stderr).strip()
            if output == _PROBE_ANSWER:
                tools = box.execute(probe_command(), 60)
        except SandboxError as error:
            output = str(error)
        finally:
            box.close()
    if output != _PROBE_ANSWER:
        detail = output.splitlines()[-1] if output else "no output"
        raise InputError(
            f"--image {image}: cannot run commands through `{SERVER}` as user {AGENT} in {WORKDIR} ({detail}); "
            "use an image built from sandbox_templates/ (`python -m harness sandbox build docker`) or derived from it"
        )
    return tools
