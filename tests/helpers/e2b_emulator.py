"""An E2B emulator on the local Docker engine, installed as `e2b` for our E2B code.

`Template.build` replays what E2B's build service does with a template (e2b-dev/infra,
packages/orchestrator/pkg/template/build/): the base phase (`phases/base/provision.sh`: sudo installed,
root's password removed, `/etc/profile` sourcing `~/.bashrc` and `~/.profile`, and the default user `user`
created with `useradd -m`, a passwordless sudoer), then the template's own steps exactly as the real SDK
records them (`Template._instructions_with_hashes`), with every COPY packed by the SDK's own
`tar_file_stream`, then the finalize phase (`phases/finalize/configure.sh`: ends with
`chmod -R 777 /usr/local` and `/code`), with E2B's layer cache (tests/helpers/e2b_emulator_build.py).
`Sandbox.create` starts a container from that image with the
template's CPUs and memory and, without internet, no network; root in it may mount and make namespaces
(a VM's root can), and /dev/shm is half the memory, as systemd, the VM's init (envd is its service,
e2b-dev/infra `envd.service.tpl`), mounts it (a tmpfs without a size).
`commands.run` runs `/bin/bash -l -c CMD` as the given user with the sandbox's envs, as envd does
(e2b `sandbox_sync/commands/command.py: Commands._start`), output in 32 KiB chunks, a signal-killed
command as exit -1, the SDK's TimeoutException past `timeout`.

The image layers are cached by Docker, so only the first build of the recipe's steps takes minutes.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import os
import signal
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import docker
import e2b

from harness.sandboxes.recipe import host_ca_bundle
from tests.helpers.e2b_emulator_build import (
    LABEL,
    build_dockerfile,
    build_layers,
    docker_build,
    image_exists,
    inputs_hash,
)
from tests.helpers.e2b_service import TemplateStore

BuildException = e2b.BuildException
CommandExitException = e2b.CommandExitException
CommandResult = e2b.CommandResult
SandboxQuery = e2b.SandboxQuery
SandboxException = e2b.SandboxException
TimeoutException = e2b.TimeoutException
AuthenticationException = e2b.AuthenticationException
RateLimitException = e2b.RateLimitException
NotFoundException = e2b.NotFoundException
ServiceBusyException = e2b.ServiceBusyException
SandboxNotRunningException = e2b.SandboxNotRunningException

CHUNK = 32 * 1024
IMAGE_REPOSITORY = "harness-e2b-emulator"
SIGNAL_EXIT_CODE = -1


@dataclass
class BuiltTemplate:
    """One build: its image once built, the CPUs and memory of its sandboxes, and its status."""

    build_id: str
    image: str
    cpu_count: int
    memory_mb: int
    status: str = "building"


@dataclass
class Registry:
    """The emulated account: its templates, the build cache's layers, and live sandboxes."""

    templates: TemplateStore = field(default_factory=TemplateStore)
    cached_layers: set[str] = field(default_factory=set)
    """Keys of the layers a build has finished: E2B caches each step as soon as it succeeds."""
    failing_step: str | None = None
    """A RUN step containing this text fails in the next build that runs it (then the network is back)."""
    stream_cut_after_s: float | None = None
    """A proxy in front of envd that cuts every command's stream after this long: envd then ends it with the
    request's context error (infra `envd/internal/services/process/start.go`: `cancel(ctx.Err())`), which the
    SDK raises as its TimeoutException (`envd/rpc.py`: `Code.CANCELED`)."""
    sandboxes: dict[str, Sandbox] = field(default_factory=dict)


REGISTRY = Registry()
_ids = itertools.count(1)


def client() -> Any:
    return docker.from_env()


class Template(e2b.Template):
    @staticmethod
    def build(
        template: Any,
        name: str | None = None,
        cpu_count: int | None = None,
        memory_mb: int | None = None,
        on_build_logs: Any = None,
        tags: list[str] | None = None,
        **options: Any,
    ) -> Any:
        ca = host_ca_bundle()
        context = Path(template._template._file_context_path)
        if ca is not None and (context / "extra-ca.crt").exists():  # this host reaches PyPI through a proxy
            (context / "extra-ca.crt").write_bytes(ca.read_bytes())
        build = BuiltTemplate(str(uuid.uuid4()), "", cpu_count or 2, memory_mb or 1024)
        REGISTRY.templates.claim(name or "", build, tags)
        with tempfile.TemporaryDirectory(prefix="e2b-emulator-") as work:
            layers = build_layers(template, Path(work))
            dockerfile, failed = build_dockerfile(layers, REGISTRY.cached_layers, REGISTRY.failing_step)
            (Path(work) / "Dockerfile").write_text(dockerfile)
            build.image = f"{IMAGE_REPOSITORY}:{inputs_hash(Path(work))}"
            built = layers if failed is None else layers[:failed]
            try:
                if failed is not None or not image_exists(build.image):
                    docker_build(work, build.image, on_build_logs)
            except BuildException:
                build.status = "error"
                REGISTRY.failing_step = None
                REGISTRY.cached_layers.update(layer.key for layer in built)
                raise
        REGISTRY.cached_layers.update(layer.key for layer in layers)
        build.status = "ready"
        return type("BuildInfo", (), {"template_id": f"tmpl-{name}", "build_id": build.build_id, "name": name})()

    @staticmethod
    def exists(name: str, **options: Any) -> bool:
        return name in REGISTRY.templates

    @staticmethod
    def get_tags(name: str, **options: Any) -> list[e2b.TemplateTag]:
        return REGISTRY.templates.get_tags(name)

    @staticmethod
    def assign_tags(target: str, tags: list[str], **options: Any) -> Any:
        return REGISTRY.templates.assign_tags(target, tags)


class _Handle:
    """A running command: its docker exec, read on a thread into 32 KiB chunks."""

    def __init__(self, exec_id: str, timeout: float | None):
        self._exec_id = exec_id
        self._deadline = None if not timeout else time.monotonic() + timeout
        cut = REGISTRY.stream_cut_after_s
        self._cut_at = None if cut is None else time.monotonic() + cut
        self._chunks: list[tuple[str, bytes]] = []
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._killed = False
        self._stream = client().api.exec_start(exec_id, stream=True, demux=True)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        with contextlib.suppress(Exception):
            for out, err in self._stream:
                for name, data in (("stdout", out), ("stderr", err)):
                    for start in range(0, len(data or b""), CHUNK):
                        with self._lock:
                            self._chunks.append((name, data[start : start + CHUNK]))
        self._done.set()

    def wait(self, on_pty: Any = None, on_stdout: Any = None, on_stderr: Any = None) -> CommandResult:
        stdout, stderr = io.StringIO(), io.StringIO()
        while True:
            finished = self._done.wait(0.05)
            with self._lock:
                chunks, self._chunks = self._chunks, []
            for name, data in chunks:
                text = data.decode(errors="replace")
                (stdout if name == "stdout" else stderr).write(text)
                callback = on_stdout if name == "stdout" else on_stderr
                if callback:
                    callback(text)
            if finished and not chunks:
                break
            if self._deadline is not None and time.monotonic() > self._deadline:
                raise TimeoutException("context deadline exceeded: the command's timeout passed")
            if self._cut_at is not None and time.monotonic() > self._cut_at:
                raise TimeoutException("canceled: context canceled")
        code = client().api.exec_inspect(self._exec_id)["ExitCode"]
        if self._killed:
            code = SIGNAL_EXIT_CODE
        if code != 0:
            raise CommandExitException(stderr.getvalue(), stdout.getvalue(), code, None)
        return CommandResult(stderr.getvalue(), stdout.getvalue(), 0, None)

    def kill(self) -> bool:
        """SIGKILL to the command's process (envd's `SendSignal`), from the host."""
        pid = client().api.exec_inspect(self._exec_id).get("Pid")
        if not pid:
            return False
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
            self._killed = True
        return True


class _Commands:
    def __init__(self, sandbox: Sandbox):
        self._sandbox = sandbox

    def run(
        self,
        cmd: str,
        background: bool | None = None,
        envs: dict[str, str] | None = None,
        user: str | None = None,
        cwd: str | None = None,
        timeout: float | None = 60,
        retain_output: bool = True,
        **options: Any,
    ) -> Any:
        box = self._sandbox
        if box.container is None:
            raise e2b.SandboxNotFoundException(f"sandbox {box.sandbox_id} is not running")
        exec_id = client().api.exec_create(
            box.container.id,
            ["/bin/bash", "-l", "-c", cmd],
            user=user or "user",
            environment={**box.envs, **(envs or {})},
            workdir=cwd or "/home/user",
        )["Id"]
        handle = _Handle(exec_id, timeout)
        return handle if background else handle.wait()


class Sandbox:
    def __init__(self, template: str, timeout: int, envs: dict[str, str], internet: bool, metadata: dict[str, str]):
        self.template = REGISTRY.templates.resolve(template)
        self.sandbox_id = f"emulated-{os.getpid()}-{next(_ids)}"
        self.template_name = template
        self.envs = envs
        self.metadata = metadata
        self.started_at = datetime.now(timezone.utc)
        self.timeout = timeout
        self.container: Any = client().containers.run(
            self.template.image,
            ["sleep", "infinity"],
            detach=True,
            init=True,
            user="0:0",
            hostname="e2b",
            network_mode="bridge" if internet else "none",
            mem_limit=f"{self.template.memory_mb}m",
            memswap_limit=f"{self.template.memory_mb}m",
            shm_size=f"{self.template.memory_mb // 2}m",
            nano_cpus=self.template.cpu_count * 10**9,
            cap_add=["SYS_ADMIN"],
            labels={LABEL: self.sandbox_id},
        )
        self.commands = _Commands(self)
        REGISTRY.sandboxes[self.sandbox_id] = self

    @classmethod
    def create(
        cls,
        template: str | None = None,
        timeout: int | None = None,
        metadata: dict[str, str] | None = None,
        envs: dict[str, str] | None = None,
        allow_internet_access: bool = True,
        **options: Any,
    ) -> Sandbox:
        return cls(template or "base", timeout or 300, envs or {}, allow_internet_access, metadata or {})

    def get_info(self, **options: Any) -> e2b.SandboxInfo:
        return e2b.SandboxInfo(
            sandbox_id=self.sandbox_id,
            sandbox_domain=None,
            template_id=f"tmpl-{self.template_name}",
            name=self.template_name,
            metadata=self.metadata,
            started_at=self.started_at,
            end_at=self.started_at + timedelta(seconds=self.timeout),
            state=e2b.SandboxState.RUNNING,
            cpu_count=self.template.cpu_count,
            memory_mb=self.template.memory_mb,
            envd_version="0.2.0",
        )

    def set_timeout(self, timeout: int, **options: Any) -> None:
        """The sandbox now ends `timeout` seconds from now (the emulator does not kill it then)."""
        self.timeout = int((datetime.now(timezone.utc) - self.started_at).total_seconds()) + timeout

    @staticmethod
    def list(query: Any = None, **options: Any) -> Any:
        wanted = query.metadata if query is not None else {}
        items = [b.get_info() for b in REGISTRY.sandboxes.values() if b.metadata.items() >= wanted.items()]
        return type("Paginator", (), {"has_next": False, "next_items": lambda self: items})()

    def kill(self, **options: Any) -> bool:
        if isinstance(self, str):  # called as Sandbox.kill(sandbox_id, ...), like the SDK allows
            if self not in REGISTRY.sandboxes:
                raise NotFoundException(f"sandbox {self} not found")
            return Sandbox.kill(REGISTRY.sandboxes[self])
        if self.container is None:
            raise e2b.SandboxNotFoundException(f"sandbox {self.sandbox_id} not found")
        with contextlib.suppress(docker.errors.NotFound):
            self.container.remove(force=True)
        self.container = None
        REGISTRY.sandboxes.pop(self.sandbox_id, None)
        return True
