"""The E2B cloud sandbox: one sandbox per episode from the domain's template (the recipe plus the
collection baked in read-only), no internet, commands through `harness-exec` like Docker.

The SDK is injected (`sdk`), so tests drive this exact code against a recording fake of its classes.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.sandboxes import (
    IMAGE_PATH,
    ExecResult,
    SandboxError,
    SandboxSettings,
    sandbox_environment,
)
from harness.sandboxes.docker import AGENT, LABEL_EPISODE, LABEL_OWNER, LABEL_RUN, owner_is_dead, owner_label
from harness.sandboxes.output import HeadTail, capped_result, harness_exec_timed_out
from harness.sandboxes.recipe import RECIPE_DIR, write_build_context

API_KEY_VARIABLE = "E2B_API_KEY"
LIFETIME_MARGIN_S = 120
"""A sandbox lives this much longer than the episode's time limit, never hours more."""
LABEL_APP = "harness.app"
_GRACE_S = 30.0
_POLL_S = 0.2


def require_api_key() -> str:
    key = os.environ.get(API_KEY_VARIABLE)
    if not key:
        raise SandboxError(f"--sandbox e2b needs an E2B API key: set {API_KEY_VARIABLE}")
    return key


def template_name(domain: str) -> str:
    return "harness-" + re.sub(r"[^a-z0-9-]", "-", domain.lower())


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


def build_template(sdk: Any, domain: str, collection: Path, log: Callable[[str], None]) -> str:
    """Build the domain's template in E2B's cloud; returns its template id."""
    require_api_key()
    with tempfile.TemporaryDirectory(prefix="harness-e2b-") as context:
        template = template_definition(sdk, Path(context), collection)
        info = sdk.Template.build(
            template, name=template_name(domain), cpu_count=2, memory_mb=4096,
            on_build_logs=lambda entry: log(str(entry)),
        )  # fmt: skip
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

    def describe(self) -> dict[str, object]:
        limits = self._settings.limits
        return {
            "backend": "e2b",
            "template": self._template,
            "sandbox_id": getattr(self._sandbox, "sandbox_id", None),
            "lifetime_s": self._lifetime_s,
            "limits": {"mechanism": "e2b template", "memory_mb": limits.memory_mb, "cpus": limits.cpus},
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
        except Exception as error:
            raise SandboxError(f"cannot create an E2B sandbox from {self._template}: {error}") from error

    def execute(self, command: str, timeout_s: float) -> ExecResult:
        if self._sandbox is None:
            raise SandboxError("sandbox not started")
        limit = max(timeout_s, 0.01)
        stdout, stderr = HeadTail(self._settings.output_limit_bytes), HeadTail(self._settings.output_limit_bytes)
        started = time.monotonic()
        try:
            handle = self._sandbox.commands.run(
                f"harness-exec {limit:.3f} {shlex.quote(command)}",
                background=True,
                user=AGENT,
                cwd="/workspace",
                timeout=limit + _GRACE_S,
            )
        except Exception as error:
            raise SandboxError(f"E2B command failed to start: {error}") from error
        outcome: dict[str, Any] = {}
        waiter = threading.Thread(target=_wait, args=(self._sdk, handle, stdout, stderr, outcome), daemon=True)
        waiter.start()
        while waiter.is_alive():
            if self._cancel.is_set():
                handle.kill()
                with contextlib.suppress(Exception):
                    self._sandbox.commands.run(f"pkill -KILL -u {AGENT}", user=AGENT, timeout=10)
                waiter.join(10)
                break
            waiter.join(_POLL_S)
        if "error" in outcome:
            raise SandboxError(f"E2B command failed: {outcome['error']}")
        duration = time.monotonic() - started
        code = None if self._cancel.is_set() else outcome.get("exit_code")
        return capped_result(stdout, stderr, code, harness_exec_timed_out(code, duration, limit), duration)

    def close(self) -> None:
        if self._sandbox is not None:
            with contextlib.suppress(Exception):  # already gone: its lifetime ran out
                self._sandbox.kill()
            self._sandbox = None


def _wait(sdk: Any, handle: Any, stdout: HeadTail, stderr: HeadTail, outcome: dict[str, Any]) -> None:
    """Wait for the command; a non-zero exit arrives as the SDK's CommandExitException."""
    try:
        result = handle.wait(on_stdout=lambda text: stdout.feed(text.encode()),
                             on_stderr=lambda text: stderr.feed(text.encode()))  # fmt: skip
        outcome["exit_code"] = result.exit_code
    except sdk.CommandExitException as error:
        outcome["exit_code"] = error.exit_code
    except Exception as error:  # timeouts, lost connections
        outcome["error"] = f"{type(error).__name__}: {error}"
