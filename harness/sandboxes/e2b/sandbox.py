"""The E2B cloud sandbox: one sandbox per episode from the domain's template (the recipe plus the
collection baked in read-only), no internet, each command through `harness-exec`, started as root, which
runs it as the agent in a pid, ipc and mount namespace of its own. A template's CPUs and memory are fixed
when E2B builds it, so each size is its own template.

What E2B adds around our recipe, and what this module undoes (e2b-dev/infra,
packages/orchestrator/pkg/template/build/phases/base/provision.sh and phases/finalize/configure.sh):
root's password is removed, a default user `user` is created (`useradd`, uid 1000 on Debian) and made a
passwordless sudoer, `/etc/profile` sources `~/.bashrc` and `~/.profile`, and the build ends with
`chmod -R 777 /usr/local` after our steps. Every command runs as `/bin/bash -l -c CMD` (the SDK's
`Commands._start`), so a login shell's startup files run before `harness-exec`: root's, which the agent
cannot write, for a command; the agent's own, emptied at lock-down, for the kill after it.

The SDK is injected (`sdk`), so tests drive this exact code against a fake of its classes and against a
local emulator of the service (tests/helpers/e2b_emulator.py).
"""

from __future__ import annotations

import contextlib
import shlex
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from harness.sandboxes.base import (
    IMAGE_PATH,
    WORKDIR,
    ExecResult,
    SandboxError,
    SandboxSettings,
    sandbox_environment,
)
from harness.sandboxes.e2b.errors import explain, sdk_errors
from harness.sandboxes.e2b.plan import Plan, create_backoff_s, current_plan, sandbox_lifetime
from harness.sandboxes.e2b.templates import TemplateResources
from harness.sandboxes.file_read import file_bytes, output_room, read_command
from harness.sandboxes.limits import ResourceLimits
from harness.sandboxes.output import HeadTail
from harness.sandboxes.pacing import Pacer
from harness.sandboxes.remote_exec import (
    AGENT,
    AGENT_HOME,
    AGENT_UID,
    GRACE_S,
    KILL_AGENT_PROCESSES,
    LABEL_EPISODE,
    LABEL_INVOCATION,
    LABEL_OWNER,
    LABEL_RUN,
    owner_is_dead,
    owner_label,
    run_remote,
)

_LABEL_APP = "harness.app"
SIGNAL_EXIT_CODE = -1
"""envd reports -1 for a process ended by a signal (its `ProcessState.ExitCode()`)."""
_COMMAND_PART = "HARNESS_COMMAND_"
_COMMAND_PART_CHARS = 16_384
"""At most 64 KiB (4 bytes a character) per variable: one `NAME=value` is held to the longest argument too."""
_DOTFILES = (".bash_profile", ".bash_login", ".profile", ".bashrc", ".bash_logout")
"""What a login bash and E2B's `/etc/profile` line source from the home, before our command runs (and at
`exit`): the agent's run before the kill after each command."""
LOCKED = "locked"
_SCRATCH = "/run/harness-scratch"
"""Where the lock-down mounts the one scratch tmpfs (root-only); its folders are bound where the agent writes."""
_SCRATCH_FOLDERS = (
    ("tmp", AGENT_HOME),
    ("run", "/workspace/run"),
    ("shm", "/dev/shm"),
    ("var-tmp", "/var/tmp"),
    ("lock", "/run/lock"),
)
"""Every folder of the image the agent may write, on the scratch (a link, as the image's /tmp, is bound where it
leads): /dev/shm is half the memory on its own
otherwise (systemd's tmpfs), /run/lock a fifth (it is on /run), /var/tmp the sandbox's disk."""
HARNESS_EXEC = "/usr/local/bin/harness-exec"
SETUID_PROGRAMS = (
    "/usr/bin/sudo",
    "/usr/bin/su",
    "/usr/bin/passwd",
    "/usr/bin/chsh",
    "/usr/bin/chfn",
    "/usr/bin/gpasswd",
    "/usr/bin/newgrp",
    "/usr/bin/mount",
    "/usr/bin/umount",
    "/usr/bin/chage",
    "/usr/bin/expiry",
    "/usr/sbin/unix_chkpwd",
    "/usr/bin/pkexec",
    "/usr/lib/openssh/ssh-keysign",
)
"""Debian's setuid and setgid programs (and E2B's sudo). The recipe's last step strips every such bit on the
root filesystem; walking it again at each start read a lazily fetched disk for seconds, so a start checks
these: one still set means the template was not built from this recipe."""
KEEP_ALIVE_MARGIN_S = 15.0
"""Before each command the sandbox must have its time limit plus this left (the kill after it, round trips)."""


def _scratch_mb(limits: ResourceLimits) -> int:
    """The scratch tmpfs: --disk-mb, at most half the sandbox's memory. Its pages are memory no kill frees,
    and envd, which E2B's OOM killer never picks, needs some: a full scratch must leave the VM running."""
    return min(limits.disk_mb, limits.memory_mb // 2)


def _lockdown_script(disk_mb: int) -> str:
    """Run as root when a sandbox starts, before any agent command: lock root's and `user`'s empty
    passwords, drop the sudoers entry, check that the setuid programs the build stripped have no
    setuid/setgid bit (a template not built from this recipe is refused), strip write bits for others from
    what E2B's build opens after our steps (`chmod -R 777 /usr/local` and `/code`, so `harness-exec` cannot
    be replaced), mount the collection read-only (as on Docker, a
    write fails with "Read-only file system"), put every folder the agent may write on one tmpfs of
    `disk_mb` (`_SCRATCH_FOLDERS`), and put root-owned, empty, read-only startup files in the agent's home
    (sticky /tmp: the agent can neither edit nor replace them)."""
    binds = "\n".join(
        f'target=$(readlink -f {target}); if [ -d "$target" ]; then mkdir -m {"0755" if name == "run" else "1777"} '
        f'{_SCRATCH}/{name}; mount --bind {_SCRATCH}/{name} "$target"; fi'
        for name, target in _SCRATCH_FOLDERS
    )
    return f"""set -e
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
for account in root user; do if id -u "$account" >/dev/null 2>&1; then usermod -L "$account"; fi; done
if [ -f /etc/sudoers ]; then sed -i '/NOPASSWD/d' /etc/sudoers; fi
rm -f /etc/sudoers.d/*
for program in {" ".join(SETUID_PROGRAMS)}; do
  if [ -u "$program" ] || [ -g "$program" ]; then echo "setuid: $program"; exit 3; fi
done
chmod -R go-w /usr/local
if [ -d /code ]; then chmod -R go-w /code; fi
chmod 0755 {HARNESS_EXEC}
mount --bind /workspace/documents /workspace/documents
mount -o remount,bind,ro /workspace/documents
mkdir -m 0700 {_SCRATCH}
mount -t tmpfs -o size={disk_mb}m,mode=0700 tmpfs {_SCRATCH}
{binds}
chown {AGENT_UID}:{AGENT_UID} /workspace/run
cd {AGENT_HOME}
for name in {" ".join(_DOTFILES)}; do : > "$name"; chmod 0444 "$name"; done
echo {LOCKED}"""


def reap_orphans(sdk: Any, api_key: str) -> list[str]:
    """Kill harness sandboxes whose runner process is gone (found through the SDK's list by metadata)."""
    return _kill_sandboxes(
        sdk, api_key, {_LABEL_APP: "harness"}, lambda info: owner_is_dead(info.metadata.get(LABEL_OWNER, ""))
    )


def kill_invocations(sdk: Any, api_key: str, run_id: str, invocations: list[str]) -> list[str]:
    """Kill every sandbox these invocations of the run left running, on whichever host made it (the service lists
    the whole team's sandboxes by metadata: e2b-dev/infra `api/internal/handlers/sandboxes_list.go`). Raises
    `SandboxError`."""
    killed: list[str] = []
    for invocation in invocations:
        metadata = {_LABEL_APP: "harness", LABEL_RUN: run_id, LABEL_INVOCATION: invocation}
        killed += _kill_sandboxes(sdk, api_key, metadata, lambda info: True)
    return killed


def _kill_sandboxes(sdk: Any, api_key: str, metadata: dict[str, str], doomed: Callable[[Any], bool]) -> list[str]:
    """Kill the running sandboxes with this metadata that `doomed` picks; their ids. Raises `SandboxError`."""
    killed = []
    gone: tuple[type[BaseException], ...] = tuple(filter(None, [getattr(sdk, "NotFoundException", None)]))
    try:
        paginator = sdk.Sandbox.list(query=sdk.SandboxQuery(metadata=metadata), api_key=api_key)
        while paginator.has_next:
            for info in paginator.next_items():
                if doomed(info):
                    with contextlib.suppress(*gone):  # gone meanwhile
                        sdk.Sandbox.kill(info.sandbox_id, api_key=api_key)
                    killed.append(info.sandbox_id)
    except sdk_errors(sdk) as error:
        raise SandboxError(f"cannot list or kill E2B sandboxes: {explain(sdk, error)}") from None
    return killed


class E2BSandbox:
    def __init__(
        self,
        sdk: Any,
        template: str,
        api_key: str,
        run_id: str,
        episode_name: str,
        settings: SandboxSettings,
        time_limit_s: float,
        cancel: threading.Event | None = None,
        plan: Plan | None = None,
        pacer: Pacer | None = None,
        invocation: str = "",
    ):
        self._sdk = sdk
        self._template = template
        self._api_key = api_key
        self._metadata = {
            _LABEL_APP: "harness",
            LABEL_RUN: run_id,
            LABEL_INVOCATION: invocation,
            LABEL_EPISODE: episode_name,
            LABEL_OWNER: owner_label(),
        }
        self._settings = settings
        self._environment = sandbox_environment(IMAGE_PATH)
        self._plan = plan or current_plan()
        self._lifetime_s = sandbox_lifetime(time_limit_s, self._plan)
        self._created_at = self._ends_at = 0.0
        """Monotonic times no later than the service's: the creation request, the sandbox's end."""
        self._cancel = cancel or threading.Event()
        self._pacer = pacer
        self._sandbox: Any = None
        self._applied: dict[str, object] = {"memory_mb": None, "cpus": None, "pids": settings.limits.pids}

    def describe(self) -> dict[str, object]:
        return {
            "backend": "e2b",
            "template": self._template,
            "sandbox_id": getattr(self._sandbox, "sandbox_id", None),
            "invocation": self._metadata[LABEL_INVOCATION],
            "lifetime_s": self._lifetime_s,
            "limits": {
                "mechanism": "e2b template",
                **self._applied,
                "pids_mechanism": "ulimit -u for the agent user",
                "disk_mb": _scratch_mb(self._settings.limits),
                "disk": f"one tmpfs for {', '.join(target for _, target in _SCRATCH_FOLDERS)}, at most half the memory",
            },
        }

    def start(self) -> None:
        try:
            self._sandbox = self._create()
            info = self._sandbox.get_info()
            self._lock_down()
        except sdk_errors(self._sdk) as error:
            reason = explain(self._sdk, error)
            raise SandboxError(f"cannot create an E2B sandbox from {self._template}: {reason}") from None
        # Recorded as the service reports it: what the sandbox has, not what the run asked for.
        self._applied = {"memory_mb": info.memory_mb, "cpus": info.cpu_count, "pids": self._settings.limits.pids}
        wanted = TemplateResources.from_limits(self._settings.limits)
        if (info.cpu_count, info.memory_mb) != (wanted.cpu_count, wanted.memory_mb):
            raise SandboxError(
                f"template {self._template} gives {info.cpu_count} CPUs and {info.memory_mb} MB, not the "
                f"{wanted.cpu_count} and {wanted.memory_mb} its name says; rebuild it with `python -m harness "
                "sandbox build e2b`"
            )

    def _create(self) -> Any:
        """`Sandbox.create` in this runner's turn (the plan's creation rate), retried with jittered backoff
        while the team is at its rate or concurrent-sandbox cap (429)."""
        rate_limited = getattr(self._sdk, "RateLimitException", ())
        for wait_s in (*create_backoff_s(), None):
            if self._pacer is not None and not self._pacer.wait_turn(self._cancel):
                raise SandboxError("cancelled before its sandbox was created")
            try:
                self._created_at = time.monotonic()
                self._ends_at = self._created_at + self._lifetime_s
                return self._sdk.Sandbox.create(
                    template=self._template,
                    timeout=self._lifetime_s,
                    metadata=self._metadata,
                    envs=self._environment,
                    allow_internet_access=False,
                    api_key=self._api_key,
                    # the SDK resends a create answered 502/503/504 (its `retry.py`): one sandbox, not two
                    idempotency_key=uuid.uuid4().hex,
                )
            except rate_limited:
                if wait_s is None or self._cancel.wait(wait_s):
                    raise
        raise AssertionError("unreachable")

    def _lock_down(self) -> None:
        try:
            script = _lockdown_script(_scratch_mb(self._settings.limits))
            result = self._sandbox.commands.run(script, user="root", timeout=120)
        except self._sdk.CommandExitException as error:
            detail = " ".join(f"{error.stdout} {error.stderr}".split())
            advice = "; rebuild the template with `python -m harness sandbox build e2b`" if "setuid" in detail else ""
            raise SandboxError(f"cannot lock the E2B sandbox down: {detail}{advice}") from None
        if result.stdout.strip() != LOCKED:
            raise SandboxError(f"cannot lock the E2B sandbox down: {result.stdout.strip()!r}")

    def execute(self, command: str, timeout_s: float) -> ExecResult:
        return self._run(command, timeout_s, self._settings)

    def read_bytes(self, path: str, max_bytes: int, timeout_s: float) -> bytes:
        """A file as the agent sees it (sandboxes/file_read.py)."""
        settings = replace(self._settings, output_limit_bytes=2 * output_room(max_bytes))
        return file_bytes(self._run(read_command(path, max_bytes), timeout_s, settings), path, max_bytes)

    def _run(self, command: str, timeout_s: float, settings: SandboxSettings) -> ExecResult:
        if self._sandbox is None:
            raise SandboxError("sandbox not started")
        self._keep_alive_for(timeout_s + KEEP_ALIVE_MARGIN_S)
        return run_remote(
            lambda limit: self._start(command, limit),
            self._kill_agent_processes,
            timeout_s,
            settings,
            self._cancel,
        )

    def _keep_alive_for(self, needed_s: float) -> None:
        """The sandbox ages while the episode waits (a connection slot, the model), its agent clock paused:
        before a command that could outlive it, extend its lifetime with `set_timeout` (the service caps it
        at the plan's longest sandbox since creation, infra `api/internal/orchestrator/keep_alive.go`), or,
        where the plan leaves too little, end the episode here rather than lose the sandbox mid-command."""
        now = time.monotonic()
        if now + needed_s <= self._ends_at:
            return
        left_s = self._created_at + self._plan.max_lifetime_s - now
        if needed_s > left_s:
            raise SandboxError(
                f"E2B's {self._plan.name} plan keeps a sandbox at most {self._plan.max_lifetime_s} s and this one "
                f"has {max(left_s, 0):.0f} s left, less than its next command may take; the episode ends before "
                "the sandbox is killed"
            )
        extension_s = int(min(max(self._lifetime_s, needed_s), left_s))
        try:
            self._sandbox.set_timeout(extension_s)
        except sdk_errors(self._sdk) as error:
            raise SandboxError(f"cannot extend the E2B sandbox's lifetime: {explain(self._sdk, error)}") from None
        self._ends_at = now + extension_s

    def command_line(self, limit_s: float, parts: int) -> str:
        """What E2B's `bash -l -c` runs as root: the agent's process limit (root is exempt; harness-exec sets
        none), then harness-exec, by absolute paths, with exactly the allow-listed environment (the login
        shell and envd add SHELL, PS1, USER and more). The command comes in the variables of `command_parts`:
        quoted into this line it grew up to five times (each `'` is `'"'"'`), past the longest argument."""
        environment = [f"{name}={value}" for name, value in self._environment.items()]
        argv = shlex.join(["/usr/bin/env", "-i", *environment, HARNESS_EXEC, f"{limit_s:.3f}"])
        command = "".join(f"${{{_COMMAND_PART}{index}}}" for index in range(parts))
        return f'ulimit -u {self._settings.limits.pids} && exec {argv} "{command}"'

    def _start(self, command: str, limit_s: float) -> _E2BCommand:
        parts = command_parts(command)
        try:
            handle = self._sandbox.commands.run(
                self.command_line(limit_s, len(parts)),
                background=True,
                envs=parts,
                user="root",  # harness-exec drops to the agent; as root it is out of the agent's reach
                cwd=WORKDIR,
                timeout=limit_s + GRACE_S,
                retain_output=False,  # the SDK would otherwise keep (and join) every chunk in memory
            )
        except sdk_errors(self._sdk) as error:
            raise SandboxError(f"E2B command failed to start: {explain(self._sdk, error)}") from None
        return _E2BCommand(self._sdk, handle)

    def _kill_agent_processes(self) -> None:
        try:
            self._sandbox.commands.run(shlex.join(KILL_AGENT_PROCESSES), user=AGENT, timeout=10, retain_output=False)
        except self._sdk.CommandExitException:
            pass  # exit 1: nothing left to kill
        except sdk_errors(self._sdk) as error:
            raise SandboxError(f"E2B command failed: {explain(self._sdk, error)}") from None

    def close(self) -> None:
        """Kill the sandbox, and any other this runner created for the episode (listed by metadata): a create
        whose answer was lost and that the SDK resent where the service ignores the idempotency key."""
        if self._sandbox is not None:
            with contextlib.suppress(*sdk_errors(self._sdk)):  # already gone: its lifetime ran out
                self._sandbox.kill()
            self._sandbox = None
        if self._created_at:
            with contextlib.suppress(SandboxError):  # a failed sweep leaves them to their timeout
                _kill_sandboxes(self._sdk, self._api_key, self._metadata, lambda info: True)


def command_parts(command: str) -> dict[str, str]:
    """The command in pieces, one environment variable each, that `command_line` joins again."""
    pieces = [command[start : start + _COMMAND_PART_CHARS] for start in range(0, len(command), _COMMAND_PART_CHARS)]
    return {f"{_COMMAND_PART}{index}": piece for index, piece in enumerate(pieces)}


@dataclass
class _E2BCommand:
    sdk: Any
    handle: Any

    def wait(self, stdout: HeadTail, stderr: HeadTail) -> int | None:
        """A non-zero exit arrives as the SDK's CommandExitException. Its TimeoutException is never the
        command's time limit (harness-exec enforces that inside the sandbox: exit 124; `run_remote` its grace
        after it): the SDK raises it also when envd ends the stream early because its request was cancelled
        (a proxy, a restart: e2b-dev/infra envd `services/process/start.go`), so it is a `SandboxError`."""
        try:
            result = self.handle.wait(
                on_stdout=lambda text: stdout.feed(text.encode()), on_stderr=lambda text: stderr.feed(text.encode())
            )
        except self.sdk.CommandExitException as error:
            # -1: ended by a signal (e.g. the agent killed its own harness-exec); no exit status to report.
            return None if error.exit_code == SIGNAL_EXIT_CODE else error.exit_code
        except self._sandbox_gone() as error:  # subclasses of TimeoutException
            raise SandboxError(f"the E2B sandbox is gone: {explain(self.sdk, error)}") from None
        except self.sdk.TimeoutException as error:
            raise SandboxError(f"E2B ended the command's output stream early: {explain(self.sdk, error)}") from None
        return result.exit_code

    def _sandbox_gone(self) -> tuple[type[BaseException], ...]:
        names = ("SandboxNotRunningException", "SandboxUnreachableException")
        return tuple(getattr(self.sdk, name) for name in names if hasattr(self.sdk, name))

    def kill(self) -> None:
        try:
            self.handle.kill()
        except sdk_errors(self.sdk) as error:  # the sandbox is gone: nothing left to kill
            raise SandboxError(f"E2B command kill failed: {explain(self.sdk, error)}") from None


def default_sdk() -> Any:
    """The e2b SDK module (tests hand in a fake one instead)."""
    import e2b

    return e2b
