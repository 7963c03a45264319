"""What a sandbox backend is to the runner: the hooks every backend has (registry.py names them), each with
the behaviour of a backend that needs nothing there. A new backend subclasses `SandboxBackend`, overrides
`check`, `facts` and `new_sandbox` (and whichever other hook it needs) and is one line of the registry."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from harness.core.errors import InputError
from harness.sandboxes.base import ExecResult, Sandbox, SandboxSettings
from harness.sandboxes.limits import ResourceLimits
from harness.sandboxes.pacing import Pacer


@dataclass(frozen=True)
class Capabilities:
    """What a run must know of its backend beyond making sandboxes."""

    max_sandboxes: int | None = None
    """Sandboxes the backend allows at once (E2B: the plan's; more are refused), None: no cap of its own."""
    cap_reason: str = ""
    """What sets `max_sandboxes`, for the console."""
    warning: str | None = None
    """A limit the backend cannot apply as asked (rlimits instead of cgroups, a short sandbox lifetime)."""
    sees_opens: bool = False
    """The host sees the agent's file opens (inotify on the collection): the sandbox's mounts are on it."""
    host_tools: bool = False
    """The agent's tools (python3 and its libraries among them) are the host's own programs: a missing one is
    installed on the host, not built into an image."""


@dataclass(frozen=True, kw_only=True)
class BackendSetup:
    """What a run asks of its backend (`SandboxBackend.check`)."""

    settings: SandboxSettings
    run_id: str
    collections: dict[str, Path]
    """Each domain's collection (E2B: its template is tagged with their hash)."""
    time_limit_s: float
    image: str | None = None
    """Docker: `--image`."""
    closed_book: bool = False
    """Its sandboxes get an empty /workspace/documents (sandboxes/closed_book.py)."""
    invocation: str = ""
    """This start of the run, in the metadata of what outlives the runner (run/sandboxing/leftovers.py)."""
    templates: dict[str, str] | None = None
    """E2B on a Ray node: the template references the driver computed (its collections are checked against
    the driver's hashes instead of read again to tag them)."""


@dataclass(frozen=True, kw_only=True)
class BuildRequest:
    """`python -m harness sandbox build NAME ...`."""

    base: str | None = None
    """Docker: the base image."""
    domain: str | None = None
    collection: Path | None = None
    """The domain's collection (E2B bakes it into the template)."""
    closed_book: bool = False
    limits: ResourceLimits = field(default_factory=ResourceLimits)


Killer = Callable[[list[str]], list[str]]
"""Kills what these starts (invocations) of a run left running on any host; the ids. Raises `SandboxError`."""


class SandboxBackend:
    """A checked backend: one fresh sandbox per episode. Class hooks run before a backend exists (`check`,
    `build`, `clean_up`, `leftovers_of`); the others on the backend a run checked."""

    name: ClassVar[str] = ""
    """Its name in the registry (`--sandbox`)."""
    tool_probe: ExecResult | None = None
    """The tool list's probe (`tools.probe_command`) as `start` ran it in its own check sandbox, so a run starts
    one sandbox before its first episode, not two; None: the run's tool check starts a sandbox for it."""
    closed_book_builtin: ClassVar[bool] = False
    """The backend makes `--closed-book` sandboxes itself (E2B: a template built with no documents); others
    are wrapped in `ClosedBookBackend`, which mounts an empty folder in place of the collection."""

    @classmethod
    def check(cls, setup: BackendSetup) -> SandboxBackend:
        """Every check before a run (raising `InputError`, one line with the fix), with no side effect: it
        starts no sandbox and removes nothing."""
        raise NotImplementedError

    @classmethod
    def build(cls, request: BuildRequest, echo: Callable[[str], None]) -> str:
        """`sandbox build NAME`: build what the backend runs (ECHO prints the build's log); the line saying
        what is ready. Raises `InputError` on bad input, `SandboxError` when the build failed."""
        raise InputError(f"sandbox build {cls.name}: the {cls.name} backend has nothing to build")

    @classmethod
    def clean_up(cls) -> str:
        """`sandbox cleanup` and the start of each run: remove what runners that are gone left on this host;
        what was removed, in a line. Raises `InputError` when the backend is not there to ask (skipped),
        `SandboxError` when asking it failed."""
        return "nothing to clean up"

    @classmethod
    def leftovers_of(cls, run_id: str) -> Killer | None:
        """For `sandbox cleanup RUN`: what kills the sandboxes the run's starts left running, None where
        nothing outlives its runner. Raises `InputError` when the backend cannot be asked."""
        return None

    @property
    def facts(self) -> dict[str, Any]:
        """For run.yaml and each trajectory: backend, image digest or template ids, limit mechanism."""
        raise NotImplementedError

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities()

    def probe_identity(self, domain: str) -> str | None:
        """What alone decides the tools a sandbox of DOMAIN has (Docker: the image's content id), so a start
        may take the tools an earlier start found there; None: probe at every start (local: the host's
        packages change)."""
        return None

    def start(self, probe: bool = True) -> None:
        """At the start of a run, after its plan: clear what dead runs left on this host (`clean_up`). PROBE
        False: the tools are known (`probe_identity`), a start need not run the tool list's probe."""
        type(self).clean_up()

    def new_sandbox(self, domain: str, collection: Path, episode_name: str, cancel: threading.Event) -> Sandbox:
        """A fresh sandbox for one episode (not started yet)."""
        raise NotImplementedError

    def leftovers(self) -> Killer | None:
        """What kills the sandboxes this run's starts left running, None where nothing outlives the runner."""
        return None

    @property
    def creations_per_s(self) -> float | None:
        """The service's rate of sandbox creations for the whole run (every Ray node together), None: unpaced."""
        return None

    def paced_by(self, pacer: Pacer) -> SandboxBackend:
        """The backend with its creations paced elsewhere (a Ray node: by the run's coordinator)."""
        return self
