"""The run's sandbox backend, from its settings: checked on the driver, and again on each Ray node."""

from __future__ import annotations

from harness.inputs.config import RunConfig
from harness.sandboxes.base import SandboxSettings
from harness.sandboxes.limits import ResourceLimits
from harness.sandboxes.registry import SandboxBackend, prepare_backend


def backend_of(config: RunConfig, run_id: str, domains: list[str]) -> SandboxBackend:
    """The sandbox backend, checked (on the driver, and again on each Ray node before its first episode)."""
    limits = ResourceLimits(config.memory_mb, config.pids, config.cpus, config.disk_mb)
    settings = SandboxSettings(limits, config.output_limit)
    return prepare_backend(config.sandbox, settings, run_id, domains, config.time_limit, config.image)
