"""A recording fake of the e2b SDK's classes, for testing our E2B code at the SDK boundary.

The cloud is unreachable here. `Sandbox.create` records its arguments; commands really run inside a local
bubblewrap sandbox over the template's collection, with the process limit and time limit our command line
gives `harness-exec` (which needs root; bubblewrap, like it, gives each command its own pid namespace;
tests/helpers/e2b_emulator.py runs the real one), and come back as the SDK's own `CommandResult` /
`CommandExitException`, their output in envd's 32 KiB chunks. The
service's refusals are the SDK's own exceptions: 400 for a lifetime above the plan's cap, 429 while
`Recorder.rate_limited` creations remain, `NotFoundException` for a sandbox already killed. The root
lock-down command is recorded and answered (bubblewrap has no root to lock). `Template` is the real template builder
(it works offline) with the network calls `build`, `exists`, `get_tags` and `assign_tags` answered here: a build
is checked as the service checks CPUs and memory (e2b-dev/infra `team.LimitResources`, for a team allowed 8
vCPUs and 8 GiB) and refused as the SDK reports it (`BuildException("400: <message>")`); names, builds and
tags behave as the API's (tests/helpers/e2b_service.py), a build ending ready, failed or interrupted
(`Recorder.build_outcome`); a sandbox's `get_info` reports the CPUs and memory its build was made with.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import json
import os
import shlex
import shutil
import string
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import e2b

from harness.sandboxes.base import TIMEOUT_EXIT_CODE, ExecResult, SandboxSettings
from harness.sandboxes.e2b.sandbox import HARNESS_EXEC, LOCKED
from harness.sandboxes.local.sandbox import BubblewrapSandbox, find_bwrap
from harness.sandboxes.remote_exec import KILL_AGENT_PROCESSES, LABEL_EPISODE
from tests.helpers.e2b_service import TemplateStore, TokenBucket

BuildException = e2b.BuildException
CommandExitException = e2b.CommandExitException
SandboxQuery = e2b.SandboxQuery
SandboxException = e2b.SandboxException
TimeoutException = e2b.TimeoutException
AuthenticationException = e2b.AuthenticationException
RateLimitException = e2b.RateLimitException
NotFoundException = e2b.NotFoundException
ServiceBusyException = e2b.ServiceBusyException
SandboxNotRunningException = e2b.SandboxNotRunningException
CHUNK = 32 * 1024
"""envd streams a process's output in chunks of at most this many bytes."""
TEAM_MAX_VCPU, TEAM_MAX_RAM_MB = 8, 8192
_ASK_SUPPORT = " (if you need to increase this limit, please contact support)"
_FULL_OUTPUT = SandboxSettings(output_limit_bytes=1 << 30)
"""The real SDK streams all output; capping is our code's job."""


@dataclass
class FakeBuild:
    """One build of a template on the service: the collection it baked in and the size every sandbox gets."""

    build_id: str
    collection: Path
    cpu_count: int = 2
    memory_mb: int = 4096
    status: str = "building"
    """building, ready or error (infra `env_builds.status_group`); only a ready build starts sandboxes."""


@dataclass
class Recorder:
    """What our code asked of the SDK."""

    templates: TemplateStore = field(default_factory=TemplateStore)
    created: list[dict[str, Any]] = field(default_factory=list)
    """Every sandbox created, the run's tool check's included (`episodes_created` leaves it out)."""
    commands: list[dict[str, Any]] = field(default_factory=list)
    killed: list[str] = field(default_factory=list)
    builds: list[dict[str, Any]] = field(default_factory=list)
    listed: list[Any] = field(default_factory=list)
    existing: list[Any] = field(default_factory=list)
    """Sandboxes on the service this process did not create (another host's, a dead runner's), as
    SandboxInfo-like objects: listed by `Sandbox.list`, killed by id."""
    rate_limited: int = 0
    """How many of the next `Sandbox.create` calls the service refuses with 429."""
    max_lifetime_s: int = 3600
    """The plan's longest sandbox (hobby): `Sandbox.create(timeout=...)` above it is a 400."""
    timeouts_set: list[int] = field(default_factory=list)

    @property
    def episodes_created(self) -> list[dict[str, Any]]:
        """The sandboxes created for episodes: not the one a run starts to check its tools."""
        return [created for created in self.created if created.get("metadata", {}).get(LABEL_EPISODE) != "tool-check"]

    """Every `set_timeout` asked for."""
    live: dict[str, Any] = field(default_factory=dict)
    """Sandboxes running on the service, by id (listed with their metadata, killed by id)."""
    by_idempotency_key: dict[str, Any] = field(default_factory=dict)
    lost_create_responses: int = 0
    """How many of the next creations succeed on the service but lose their answer (a 502 from a proxy)."""
    creation_bucket: TokenBucket | None = None
    """The API's creation rate limit (None: unlimited): a create without a token is refused with 429."""
    failures: dict[str, BaseException] = field(default_factory=dict)
    """What the service raises instead of answering: keys "build", "exists", "list", "create"."""
    build_logs: list[str] = field(default_factory=list)
    """Lines a build streams to `on_build_logs`."""
    build_outcome: str = "ready"
    """How the next builds end on the service: ready, error (a failed step), or interrupt (Ctrl-C while the
    SDK waits for the build, after the service has claimed the name)."""
    storage: Path | None = None
    """Where the service keeps the files a build uploaded (a temporary folder when None)."""
    page_size: int = 10
    """Sandboxes per page of `Sandbox.list` (the API's default, `sandboxes_list.go`)."""
    shared: SharedSandboxes | None = None
    """The service's running sandboxes as every process sees them (a runner, its resume, Ray nodes), as every
    host sees one service; None: this process's alone."""


RECORD = Recorder()
_ids = itertools.count(1)


@dataclass
class FakeSandboxInfo:
    sandbox_id: str
    metadata: dict[str, str]
    made: int = field(default_factory=time.time_ns)
    """When it was made, as the API's list orders sandboxes (by start time)."""


@dataclass(frozen=True)
class SharedSandboxes:
    """The service's list of running sandboxes in a file, each create and kill a line under a lock: a sandbox
    outlives the process that made it (kill -9), as a VM outlives the runner that asked for it."""

    path: Path

    def add(self, sandbox_id: str, metadata: dict[str, str], made: int) -> None:
        self._append({"created": sandbox_id, "metadata": metadata, "made": made})

    def remove(self, sandbox_id: str) -> bool:
        """False when no such sandbox is running (the API's 404)."""
        if all(info.sandbox_id != sandbox_id for info in self.running()):
            return False
        self._append({"killed": sandbox_id})
        return True

    def running(self) -> list[FakeSandboxInfo]:
        running: dict[str, FakeSandboxInfo] = {}
        with self._locked():
            lines = self.path.read_text().splitlines() if self.path.exists() else []
        for line in map(json.loads, lines):
            if "created" in line:
                running[line["created"]] = FakeSandboxInfo(line["created"], line["metadata"], line["made"])
            else:
                running.pop(line["killed"], None)
        return list(running.values())

    def _append(self, line: dict[str, Any]) -> None:
        with self._locked(), self.path.open("a") as handle:
            handle.write(json.dumps(line) + "\n")

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with open(f"{self.path}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield


class _Paginator:
    """The API's pages (infra `api/internal/handlers/sandboxes_list.go`): each page is listed again from what
    runs then, in the order sandboxes were made, `RECORD.page_size` at most, starting after the last one the
    previous page returned (its cursor), or, when that one is gone, at the first made after it."""

    def __init__(self, listing: Callable[[], list[Any]]):
        self._listing = listing
        self._cursor: tuple[int, str] | None = None
        self.has_next = True

    def next_items(self) -> list[Any]:
        running = sorted(self._listing(), key=_start_order)
        after = [info for info in running if self._cursor is None or _start_order(info) > self._cursor]
        page = after[: RECORD.page_size]
        self.has_next = len(after) > len(page)
        if page:
            self._cursor = _start_order(page[-1])
        return page


def _start_order(info: FakeSandboxInfo) -> tuple[int, str]:
    """The API's order and cursor: start time, then id."""
    return info.made, info.sandbox_id


class _Handle:
    def __init__(self, result: ExecResult):
        self._result = result
        self.killed = False

    def wait(self, on_pty: Any = None, on_stdout: Any = None, on_stderr: Any = None) -> e2b.CommandResult:
        result = self._result
        for text, callback in ((result.stdout, on_stdout), (result.stderr, on_stderr)):
            for start in range(0, len(text), CHUNK):
                if callback:
                    callback(text[start : start + CHUNK])
        if result.exit_code != 0:
            raise CommandExitException(result.stderr, result.stdout, result.exit_code or -1, None)
        return e2b.CommandResult(result.stderr, result.stdout, 0, None)

    def kill(self) -> bool:
        self.killed = True
        return True


class _Commands:
    def __init__(self, sandbox: Sandbox):
        self._sandbox = sandbox

    def run(
        self,
        cmd: str,
        background: bool | None = None,
        user: str | None = None,
        cwd: str | None = None,
        timeout: float | None = 60,
        **options: Any,
    ) -> Any:
        RECORD.commands.append(
            {
                "cmd": cmd,
                "background": background,
                "user": user,
                "cwd": cwd,
                "timeout": timeout,
                "episode": self._sandbox.metadata.get(LABEL_EPISODE),
                **options,
            }
        )
        self._sandbox.check_alive()
        if cmd.endswith(f"echo {LOCKED}"):
            assert user == "root" and not background, "the lock-down runs as root before anything else"
            return e2b.CommandResult("", "locked\n", 0, None)
        if cmd == shlex.join(KILL_AGENT_PROCESSES):
            # Each bwrap command has its own pid namespace, so nothing is left: kill(-1) fails with ESRCH.
            no_process = ExecResult("", "kill: (-1) - No such process\n", 1, False, False, 29, 0.0)
            handle = _Handle(no_process)
        else:
            ulimit, option, pids, joined, exec_, env, clear, *environment, program, limit, quoted = shlex.split(cmd)
            command = string.Template(quoted).substitute(options.get("envs") or {})  # what bash expands
            assert (ulimit, option, joined, exec_, env, clear) == ("ulimit", "-u", "&&", "exec", "/usr/bin/env", "-i")
            assert program == HARNESS_EXEC and user == "root" and all("=" in pair for pair in environment), cmd
            result = self._sandbox.box.execute(f"ulimit -u {pids} && exec bash -c {shlex.quote(command)}", float(limit))
            self._sandbox.check_alive()  # killed at its end mid-command: the stream breaks
            handle = _Handle(replace(result, exit_code=TIMEOUT_EXIT_CODE) if result.timed_out else result)
        return handle if background else handle.wait()


class Sandbox:
    def __init__(self, template: str, timeout: int):
        build = RECORD.templates.resolve(template)
        self.started_at = time.monotonic()
        self.ends_at = self.started_at + timeout
        self.sandbox_id = f"fake-{os.getpid()}-{next(_ids)}"  # unique across processes (a shared service)
        self.made = time.time_ns()
        self.template = build
        self.template_name = template
        self.box = BubblewrapSandbox(self.template.collection, self.sandbox_id, _FULL_OUTPUT, find_bwrap())
        self.box.start()
        self.commands = _Commands(self)

    @classmethod
    def create(cls, template: str | None = None, timeout: int | None = None, **options: Any) -> Sandbox:
        RECORD.created.append({"template": template, "timeout": timeout, **options})
        # The faults a test injects (refusals, failures, lost answers) are for its episodes' sandboxes, not
        # for the one the run's tool check starts first; the service's own limits apply to every create.
        injected = (options.get("metadata") or {}).get(LABEL_EPISODE) != "tool-check"
        if timeout is not None and timeout > RECORD.max_lifetime_s:
            hours = RECORD.max_lifetime_s // 3600
            raise SandboxException(f"400: Timeout cannot be greater than {hours} hours", status_code=400)
        if (RECORD.rate_limited and injected) or (
            RECORD.creation_bucket is not None and not RECORD.creation_bucket.allow()
        ):
            RECORD.rate_limited = max(RECORD.rate_limited - injected, 0)
            raise RateLimitException("429: Rate limit exceeded, please try again later.")
        if injected:
            _fail("create")
        key = options.get("idempotency_key")
        if key is not None and key in RECORD.by_idempotency_key:  # the same request again: the same sandbox
            return RECORD.by_idempotency_key[key]
        sandbox = cls(template or "", timeout or 300)
        sandbox.metadata = options.get("metadata") or {}
        RECORD.live[sandbox.sandbox_id] = sandbox
        if RECORD.shared is not None:
            RECORD.shared.add(sandbox.sandbox_id, sandbox.metadata, sandbox.made)
        if key is not None:
            RECORD.by_idempotency_key[key] = sandbox
        if RECORD.lost_create_responses and injected:
            # The API created it, but a proxy answered 502; the SDK's transport sends the request again
            # (e2b `retry.py`: 429/502/503/504 are retried), with the same Idempotency-Key header.
            RECORD.lost_create_responses -= 1
            return cls.create(template, timeout, **options)
        return sandbox

    def check_alive(self) -> None:
        """The service kills a sandbox at its end; envd is gone with it."""
        if time.monotonic() > self.ends_at:
            raise SandboxNotRunningException("The sandbox was killed: its timeout passed")

    def set_timeout(self, timeout: int, **options: Any) -> None:
        """The sandbox ends `timeout` seconds from now, capped at the plan's longest sandbox since its start
        (infra `api/internal/orchestrator/keep_alive.go`: `getMaxAllowedTTL`; past it, 400)."""
        RECORD.timeouts_set.append(timeout)
        now = time.monotonic()
        if now - self.started_at > RECORD.max_lifetime_s:
            raise SandboxException("400: Max instance length exceeded", status_code=400)
        self.ends_at = now + min(timeout, self.started_at + RECORD.max_lifetime_s - now)

    def get_info(self, **options: Any) -> e2b.SandboxInfo:
        now = datetime.now(timezone.utc)
        return e2b.SandboxInfo(
            sandbox_id=self.sandbox_id,
            sandbox_domain=None,
            template_id=f"tmpl-{self.template_name}",
            name=self.template_name,
            metadata=RECORD.created[-1].get("metadata", {}),
            started_at=now,
            end_at=now + timedelta(seconds=RECORD.created[-1].get("timeout", 300)),
            state=e2b.SandboxState.RUNNING,
            cpu_count=self.template.cpu_count,
            memory_mb=self.template.memory_mb,
            envd_version="0.2.0",
        )

    @staticmethod
    def list(query: Any = None, **options: Any) -> _Paginator:
        RECORD.listed.append({"query": query, **options})
        _fail("list")
        wanted = query.metadata if query is not None else {}

        def listing() -> list[FakeSandboxInfo]:
            running = [
                *RECORD.existing,
                *(FakeSandboxInfo(b.sandbox_id, b.metadata, b.made) for b in RECORD.live.values()),
            ]
            if RECORD.shared is not None:  # other processes' (this one's are live here too)
                running += [info for info in RECORD.shared.running() if info.sandbox_id not in RECORD.live]
            return [i for i in running if all(i.metadata.get(k) == v for k, v in wanted.items())]

        return _Paginator(listing)

    def kill(self, sandbox_id: str | None = None, **options: Any) -> bool:
        if isinstance(self, str):  # called as Sandbox.kill(sandbox_id, ...), like the SDK allows
            if self in RECORD.live:
                return Sandbox.kill(RECORD.live[self])
            listed = [info for info in RECORD.existing if info.sandbox_id == self]
            if listed:
                RECORD.existing.remove(listed[0])
            elif RECORD.shared is None or not RECORD.shared.remove(self):
                # infra `api/internal/handlers/sandbox_kill.go`: 404 for a sandbox not running
                raise NotFoundException(f"Sandbox {self} not found")
            RECORD.killed.append(self)
            return True
        if self.sandbox_id in RECORD.killed:
            raise NotFoundException(f"Sandbox {self.sandbox_id} not found")
        RECORD.killed.append(self.sandbox_id)
        RECORD.live.pop(self.sandbox_id, None)
        if RECORD.shared is not None:
            RECORD.shared.remove(self.sandbox_id)
        self.box.close()
        return True


def _refusal(cpu_count: int | None, memory_mb: int | None) -> str | None:
    """The service's message for CPUs or memory it will not build with (infra `team.LimitResources`)."""
    if cpu_count is not None:
        if cpu_count < 1:
            return "CPU count must be at least 1"
        if cpu_count != 1 and cpu_count % 2:
            return "CPU count must be 1 or an even number"
        if cpu_count > TEAM_MAX_VCPU:
            return f"CPU count can't be higher than {TEAM_MAX_VCPU}{_ASK_SUPPORT}"
    if memory_mb is not None:
        if memory_mb < 128:
            return "Memory must be at least 128 MiB"
        if memory_mb % 2:
            return "Memory must be divisible by 2"
        if memory_mb > TEAM_MAX_RAM_MB:
            return f"Memory can't be higher than {TEAM_MAX_RAM_MB} MiB{_ASK_SUPPORT}"
    return None


class Template(e2b.Template):
    @staticmethod
    def build(
        template: Any,
        name: str | None = None,
        cpu_count: int | None = None,
        memory_mb: int | None = None,
        **options: Any,
    ) -> Any:
        RECORD.builds.append(
            {"template": template, "name": name, "cpu_count": cpu_count, "memory_mb": memory_mb, **options}
        )
        _fail("build")
        refusal = _refusal(cpu_count, memory_mb)
        if refusal:  # the build request itself is refused: nothing claimed
            raise BuildException(f"400: {refusal}")
        uploaded = Path(tempfile.mkdtemp(dir=RECORD.storage)) / "documents"
        shutil.copytree(Path(template._template._file_context_path) / "documents", uploaded)
        build = FakeBuild(str(uuid.uuid4()), uploaded, cpu_count or 2, memory_mb or 1024)
        RECORD.templates.claim(name or "", build, options.get("tags"))
        for line in RECORD.build_logs:
            options["on_build_logs"](line)
        if RECORD.build_outcome == "interrupt":
            raise KeyboardInterrupt
        if RECORD.build_outcome == "error":
            build.status = "error"
            raise BuildException("Build failed: pip install: network unreachable")
        build.status = "ready"
        return type("BuildInfo", (), {"template_id": f"tmpl-{name}", "build_id": build.build_id, "name": name})()

    @staticmethod
    def exists(name: str, **options: Any) -> bool:
        """Whether the name resolves: claimed by any build request, finished or not (infra alias lookup)."""
        _fail("exists")
        return name in RECORD.templates

    @staticmethod
    def get_tags(name: str, **options: Any) -> list[e2b.TemplateTag]:
        return RECORD.templates.get_tags(name)

    @staticmethod
    def assign_tags(target: str, tags: list[str], **options: Any) -> Any:
        return RECORD.templates.assign_tags(target, tags)


def _fail(call: str) -> None:
    if call in RECORD.failures:
        raise RECORD.failures[call]
