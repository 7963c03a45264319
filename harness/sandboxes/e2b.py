"""The E2B cloud sandbox: one sandbox per episode from the domain's template (the recipe plus the
collection baked in read-only), no internet, commands through `harness-exec` like Docker. A template's
CPUs and memory are fixed when E2B builds it, so each size is its own template.

The SDK is injected (`sdk`), so tests drive this exact code against a recording fake of its classes.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
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
from harness.sandboxes.output import HeadTail
from harness.sandboxes.recipe import RECIPE_DIR, write_build_context
from harness.sandboxes.remote_exec import (
    AGENT,
    GRACE_S,
    KILL_AGENT_PROCESSES,
    LABEL_EPISODE,
    LABEL_OWNER,
    LABEL_RUN,
    harness_exec_argv,
    owner_is_dead,
    owner_label,
    run_remote,
)

API_KEY_VARIABLE = "E2B_API_KEY"
LIFETIME_MARGIN_S = 120
"""A sandbox lives this much longer than the episode's time limit, never hours more."""
LABEL_APP = "harness.app"
MIN_MEMORY_MB = 128
"""E2B's smallest template memory; it also wants 1 or an even number of CPUs and even megabytes."""


def require_api_key() -> str:
    key = os.environ.get(API_KEY_VARIABLE)
    if not key:
        raise SandboxError(f"--sandbox e2b needs an E2B API key: set {API_KEY_VARIABLE}")
    return key


@dataclass(frozen=True)
class TemplateResources:
    """The CPUs and memory a template is built with: every sandbox from it gets exactly these."""

    cpu_count: int
    memory_mb: int

    @classmethod
    def from_limits(cls, limits: ResourceLimits) -> TemplateResources:
        """E2B's rules for a template build (the service refuses anything else); raises `SandboxError`."""
        cpus, memory = limits.cpus, limits.memory_mb
        if not float(cpus).is_integer() or not (cpus == 1 or (cpus >= 2 and cpus % 2 == 0)):
            raise SandboxError(f"e2b: --cpus {cpus:g}: E2B gives 1 or an even number of whole CPUs")
        if memory < MIN_MEMORY_MB or memory % 2:
            raise SandboxError(
                f"e2b: --memory-mb {memory}: E2B wants an even number of megabytes, at least {MIN_MEMORY_MB}"
            )
        return cls(int(cpus), memory)


def template_name(domain: str, resources: TemplateResources) -> str:
    """One template per domain and size: a run finds the template built with the limits it asks for."""
    slug = re.sub(r"[^a-z0-9-]", "-", domain.lower())
    return f"harness-{slug}-{resources.cpu_count}cpu-{resources.memory_mb}mb"


def template_definition(sdk: Any, context: Path, collection: Path) -> Any:
    """The recipe's Dockerfile plus the collection, root-owned with no write bits, and the agent user."""
    write_build_context(context, None)
    (context / "documents").symlink_to(collection.resolve(), target_is_directory=True)
    dockerfile = (RECIPE_DIR / "Dockerfile").read_text()
    default_base = re.search(r"^ARG BASE_IMAGE=(\S+)$", dockerfile, re.M)
    if default_base:  # E2B builds FROM a registry image; substitute the recipe's default
        dockerfile = dockerfile.replace("${BASE_IMAGE}", default_base.group(1))
    return (
        sdk.Template(file_context_path=str(context))
        .from_dockerfile(dockerfile)
        .copy("documents", "/workspace/documents", user="root", resolve_symlinks=True)
        .run_cmd("chown -R root:root /workspace/documents && chmod -R a-w,a+rX /workspace/documents", user="root")
        .set_user(AGENT)
        .set_workdir("/workspace")
    )


def build_template(
    sdk: Any, domain: str, collection: Path, resources: TemplateResources, log: Callable[[str], None]
) -> str:
    """Build the domain's template in E2B's cloud with these CPUs and memory; returns its template id."""
    require_api_key()
    with tempfile.TemporaryDirectory(prefix="harness-e2b-") as context:
        template = template_definition(sdk, Path(context), collection)
        try:
            info = sdk.Template.build(
                template, name=template_name(domain, resources), cpu_count=resources.cpu_count,
                memory_mb=resources.memory_mb, on_build_logs=lambda entry: log(str(entry)),
            )  # fmt: skip
        except sdk.BuildException as error:  # the service's refusal ("400: ...") or a failed build step
            raise SandboxError(f"E2B template build failed: {error}") from None
    return info.template_id


def reap_orphans(sdk: Any, api_key: str) -> list[str]:
    """Kill harness sandboxes whose runner process is gone (found through the SDK's list by metadata)."""
    killed = []
    paginator = sdk.Sandbox.list(query=sdk.SandboxQuery(metadata={LABEL_APP: "harness"}), api_key=api_key)
    while paginator.has_next:
        for info in paginator.next_items():
            if owner_is_dead(info.metadata.get(LABEL_OWNER, "")):
                sdk.Sandbox.kill(info.sandbox_id, api_key=api_key)
                killed.append(info.sandbox_id)
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
    ):
        self._sdk = sdk
        self._template = template
        self._api_key = api_key
        self._metadata = {LABEL_APP: "harness", LABEL_RUN: run_id, LABEL_EPISODE: episode_name,
                          LABEL_OWNER: owner_label()}  # fmt: skip
        self._settings = settings
        self._lifetime_s = int(time_limit_s + LIFETIME_MARGIN_S)
        self._cancel = cancel or threading.Event()
        self._sandbox: Any = None
        self._applied: dict[str, object] = {"memory_mb": None, "cpus": None}

    def describe(self) -> dict[str, object]:
        return {
            "backend": "e2b",
            "template": self._template,
            "sandbox_id": getattr(self._sandbox, "sandbox_id", None),
            "lifetime_s": self._lifetime_s,
            "limits": {"mechanism": "e2b template", **self._applied},
        }

    def start(self) -> None:
        try:
            self._sandbox = self._sdk.Sandbox.create(
                template=self._template,
                timeout=self._lifetime_s,
                metadata=self._metadata,
                envs=sandbox_environment(IMAGE_PATH),
                allow_internet_access=False,
                api_key=self._api_key,
            )
            info = self._sandbox.get_info()
        except Exception as error:
            raise SandboxError(f"cannot create an E2B sandbox from {self._template}: {error}") from error
        # Recorded as the service reports it: what the sandbox has, not what the run asked for.
        self._applied = {"memory_mb": info.memory_mb, "cpus": info.cpu_count}
        wanted = TemplateResources.from_limits(self._settings.limits)
        if (info.cpu_count, info.memory_mb) != (wanted.cpu_count, wanted.memory_mb):
            raise SandboxError(
                f"template {self._template} gives {info.cpu_count} CPUs and {info.memory_mb} MB, not the "
                f"{wanted.cpu_count} and {wanted.memory_mb} its name says; rebuild it with `python -m harness "
                "sandbox build e2b`"
            )

    def execute(self, command: str, timeout_s: float) -> ExecResult:
        if self._sandbox is None:
            raise SandboxError("sandbox not started")
        return run_remote(
            lambda limit: self._start(command, limit), self._kill_agent_processes, timeout_s, self._settings,
            self._cancel,
        )  # fmt: skip

    def _start(self, command: str, limit_s: float) -> _E2BCommand:
        try:
            handle = self._sandbox.commands.run(
                shlex.join(harness_exec_argv(command, limit_s)),
                background=True,
                user=AGENT,
                cwd="/workspace",
                timeout=limit_s + GRACE_S,
            )
        except Exception as error:
            raise SandboxError(f"E2B command failed to start: {error}") from error
        return _E2BCommand(self._sdk, handle)

    def _kill_agent_processes(self) -> None:
        try:
            self._sandbox.commands.run(shlex.join(KILL_AGENT_PROCESSES), user=AGENT, timeout=10)
        except self._sdk.CommandExitException:
            pass  # exit 1: nothing left to kill
        except Exception as error:
            raise SandboxError(f"E2B command failed: {error}") from error

    def close(self) -> None:
        if self._sandbox is not None:
            with contextlib.suppress(Exception):  # already gone: its lifetime ran out
                self._sandbox.kill()
            self._sandbox = None


@dataclass
class _E2BCommand:
    sdk: Any
    handle: Any

    def wait(self, stdout: HeadTail, stderr: HeadTail) -> int | None:
        """A non-zero exit arrives as the SDK's CommandExitException."""
        try:
            result = self.handle.wait(on_stdout=lambda text: stdout.feed(text.encode()),
                                      on_stderr=lambda text: stderr.feed(text.encode()))  # fmt: skip
        except self.sdk.CommandExitException as error:
            return error.exit_code
        return result.exit_code

    def kill(self) -> None:
        try:
            self.handle.kill()
        except Exception as error:
            raise SandboxError(f"E2B command kill failed: {error}") from error
