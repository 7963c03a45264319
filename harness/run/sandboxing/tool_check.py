"""Before a run's first episode, on the driver and on each Ray node: every tool of the list is in a sandbox."""

from __future__ import annotations

import threading
from pathlib import Path

from harness.core.errors import InputError
from harness.sandboxes.backend import SandboxBackend
from harness.sandboxes.base import ExecResult, SandboxError
from harness.sandboxes.tools import found_tools, missing_tools, probe_command

_PROBE_TIMEOUT_S = 60.0


def checked_tools(backend: SandboxBackend, domain: str, collection: Path, where: str = "") -> dict[str, str]:
    """Each tool's path inside one sandbox of BACKEND; a missing tool is one line naming it (and its package)."""
    result = backend.tool_probe or _probe(backend, domain, collection)
    failure = result.stderr.strip().splitlines()
    if result.exit_code != 0 or failure:  # the probe prints nothing there, a missing tool included
        reason = failure[-1] if failure else "it timed out" if result.timed_out else f"exit code {result.exit_code}"
        raise InputError(f"the {backend.facts.get('backend')} sandbox{where} could not run the tool check: {reason}")
    found = found_tools(result.stdout)
    missing = missing_tools(found)
    if missing:
        names = ", ".join(tool.command for tool in missing)
        packages = " ".join(sorted({tool.package for tool in missing}))
        fix = (
            "install them on the host: apt-get install " + packages
            if backend.capabilities.host_tools
            else "rebuild the sandbox (python -m harness sandbox build ...)"
        )
        raise InputError(
            f"the {backend.facts.get('backend')} sandbox{where} lacks {names} (sandbox_templates/tools.txt); {fix}"
        )
    return found


def _probe(backend: SandboxBackend, domain: str, collection: Path) -> ExecResult:
    """The probe in a sandbox of its own, for a backend whose start ran none (E2B)."""
    sandbox = backend.new_sandbox(domain, collection, "tool-check", threading.Event())
    try:
        sandbox.start()
        return sandbox.execute(probe_command(), _PROBE_TIMEOUT_S)
    except SandboxError as error:
        raise InputError(
            f"the {backend.facts.get('backend')} sandbox did not start to check its tools: {error}"
        ) from None
    finally:
        sandbox.close()
