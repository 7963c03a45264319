"""The run's sandbox backend, from its settings: checked while planning (no side effect), started when the
run starts, on the driver and again on each Ray node."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.inputs.config import RunConfig
from harness.run.sandboxing.tool_cache import known_tools, remember_tools
from harness.run.sandboxing.tool_check import checked_tools
from harness.sandboxes.backend import BackendSetup, Capabilities, SandboxBackend
from harness.sandboxes.base import SandboxSettings
from harness.sandboxes.limits import ResourceLimits
from harness.sandboxes.registry import prepare_backend


def backend_of(
    config: RunConfig,
    run_id: str,
    collections: dict[str, Path],
    invocation: str,
    templates: dict[str, str] | None = None,
) -> SandboxBackend:
    """The sandbox backend, checked (on the driver, and again on each Ray node before its first episode), for
    this start of the run (`invocation`, the same on every node); `templates`: on a node, the E2B template
    references the driver's backend computed."""
    limits = ResourceLimits(config.memory_mb, config.pids, config.cpus, config.disk_mb)
    setup = BackendSetup(
        settings=SandboxSettings(limits, config.output_limit),
        run_id=run_id,
        collections=collections,
        time_limit_s=config.time_limit,
        image=config.image,
        closed_book=config.closed_book,
        invocation=invocation,
        templates=templates,
    )
    return prepare_backend(config.sandbox, setup)


def start_backend(
    backend: SandboxBackend, collections: dict[str, Path], cache_dir: Path, where: str = ""
) -> dict[str, Any]:
    """Start the backend (it clears what dead runs left on this host) and check the tool list in one of its
    sandboxes, or take what an earlier start found in the same build (CACHE_DIR, tool_cache.py); the facts a
    run records of its sandboxes: the backend's, with the tools found beside them. WHERE: the Ray node, for
    the refusal."""
    first = sorted(collections)[0]
    identity = backend.probe_identity(first)
    known = known_tools(cache_dir, identity) if identity else None
    backend.start(probe=known is None)
    if known is None:
        known = checked_tools(backend, first, collections[first], where)
        if identity:
            remember_tools(cache_dir, identity, known)
    return backend.facts | {"tools": known}


def watch_opens_possible(config: RunConfig, capabilities: Capabilities) -> bool:
    """`--watch-opens` asked for, and the host sees the agent's opens and can attribute them: the backend's
    mounts are on this host and one sandbox runs at a time."""
    one_at_a_time = config.sandboxes_at_once == 1
    return config.watch_opens and capabilities.sees_opens and one_at_a_time
