"""The run's sandbox backend, from its settings: checked on the driver, and again on each Ray node."""

from __future__ import annotations

from pathlib import Path

from harness.inputs.config import RunConfig
from harness.sandboxes.backend_setup import Capabilities, SandboxBackend, prepare_backend
from harness.sandboxes.base import SandboxSettings
from harness.sandboxes.limits import ResourceLimits


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
    settings = SandboxSettings(limits, config.output_limit)
    return prepare_backend(
        config.sandbox,
        settings,
        run_id,
        collections,
        config.time_limit,
        config.image,
        closed_book=config.closed_book,
        invocation=invocation,
        templates=templates,
    )


def watch_opens_possible(config: RunConfig, capabilities: Capabilities) -> bool:
    """`--watch-opens` asked for, and the host sees the agent's opens and can attribute them: the backend's
    mounts are on this host and one sandbox runs at a time."""
    one_at_a_time = config.sandboxes_at_once == 1
    return config.watch_opens and capabilities.sees_opens and one_at_a_time
