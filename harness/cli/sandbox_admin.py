"""`python -m harness sandbox build|cleanup`: build the recipe's image or templates; reap orphans."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.text import Text

from harness.core.errors import InputError
from harness.inputs.config import default_collections_dir
from harness.inputs.tasks import collection_path
from harness.sandboxes.base import SandboxError
from harness.sandboxes.docker.client import docker_client
from harness.sandboxes.limits import ResourceLimits


def _plain_printer(console: Console) -> Callable[[str], None]:
    """Build logs are printed as written, never read as rich markup."""
    return lambda line: console.print(line, markup=False, highlight=False)


def build_sandbox(
    backend: str,
    base: str | None,
    domain: str | None,
    collections_dir: Path | None,
    console: Console,
    limits: ResourceLimits | None = None,
) -> int:
    """`limits`: e2b only, the CPUs and memory baked into the template (default: a run's defaults)."""
    if backend == "docker":
        from harness.sandboxes.recipe import build_image

        try:
            tag = build_image(docker_client(), base, _plain_printer(console))
        except (RuntimeError, OSError) as error:
            console.print(Text.assemble(("error:", "red"), f" {error}"))
            return 1
        console.print(f"image ready: {tag}")
        return 0
    from harness.sandboxes.e2b.sandbox import TemplateResources, build_template, default_sdk

    if not domain:
        raise InputError("sandbox build e2b: --domain is required (one template per domain)")
    folder = collections_dir or default_collections_dir()
    try:
        resources = TemplateResources.from_limits(limits or ResourceLimits())
        collection = collection_path(folder, domain)
        template_id = build_template(default_sdk(), domain, collection, resources, _plain_printer(console))
    except SandboxError as error:
        raise InputError(str(error)) from None
    console.print(f"template ready: {template_id}")
    return 0


def cleanup_sandboxes(console: Console) -> int:
    """Leftovers of runs that are gone: local cgroups, Docker containers, E2B sandboxes (a local sandbox leaves
    nothing on disk: its tree lives in its holder's namespace)."""
    from harness.sandboxes.docker.sandbox import cleanup_orphans
    from harness.sandboxes.limits import release_stale_cgroups

    console.print(f"local: removed {release_stale_cgroups()} cgroups")
    try:
        removed = cleanup_orphans(docker_client())
        console.print(f"docker: removed {len(removed)} orphaned containers {' '.join(removed)}".rstrip())
    except InputError as error:
        console.print(f"docker: skipped ({error})", markup=False)
    if os.environ.get("E2B_API_KEY"):
        from harness.sandboxes.e2b.sandbox import default_sdk, reap_orphans

        try:
            killed = reap_orphans(default_sdk(), os.environ["E2B_API_KEY"])
        except SandboxError as error:
            console.print(f"e2b: skipped ({error})", markup=False)
            return 1
        console.print(f"e2b: killed {len(killed)} orphaned sandboxes")
    else:
        console.print("e2b: skipped (E2B_API_KEY not set)")
    return 0
