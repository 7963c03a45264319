"""`python -m harness sandbox build|cleanup`: build the recipe's image or templates; reap orphans."""

from __future__ import annotations

import argparse
import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from harness.cli.arguments import add_collections_dir
from harness.cli.command import EXIT_FAILED, EXIT_OK, Session
from harness.core.errors import InputError
from harness.inputs.config import SANDBOX_BACKENDS
from harness.sandboxes.base import SandboxError
from harness.sandboxes.docker.client import docker_client
from harness.sandboxes.limits import ResourceLimits

if TYPE_CHECKING:
    from harness.records.run_folder import RunFolder

BUILT_BACKENDS = tuple(name for name in SANDBOX_BACKENDS if name != "local")
"""The backends with something to build: the local sandbox runs the host's own tools."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m harness sandbox", description="Build and clean up sandboxes.")
    commands = parser.add_subparsers(dest="action", required=True)
    build = commands.add_parser(
        "build", help="build the Docker image or a domain's E2B template from sandbox_templates/"
    )
    build.add_argument("backend", choices=BUILT_BACKENDS, help="what to build: the Docker image or an E2B template")
    build.add_argument(
        "--base",
        help="docker: base image (default: the recipe's, from a registry); 'debootstrap' builds one with no registry",
    )
    build.add_argument("--domain", help="e2b: the domain whose collection the template bakes in")
    build.add_argument(
        "--closed-book",
        action="store_true",
        help="e2b: the template with no documents, which runs with --closed-book use",
    )
    add_collections_dir(build)
    defaults = ResourceLimits()
    build.add_argument("--cpus", type=float, default=defaults.cpus, help="e2b: the template's CPUs (default: 2)")
    build.add_argument(
        "--memory-mb", type=int, default=defaults.memory_mb, help="e2b: the template's memory (default: 4096)"
    )
    cleanup = commands.add_parser(
        "cleanup", help="remove containers and E2B sandboxes left by runs that are no longer alive"
    )
    cleanup.add_argument(
        "runs",
        nargs="*",
        type=Path,
        metavar="RUN",
        help="e2b: also kill what these run folders' starts left running, on any host (a "
        "folder a runner holds is refused)",
    )
    return parser


def handle(arguments: argparse.Namespace, session: Session) -> int:
    if arguments.action == "cleanup":
        return cleanup_sandboxes(session.console, arguments.runs)
    limits = ResourceLimits(memory_mb=arguments.memory_mb, cpus=arguments.cpus)
    # what Ctrl-C leaves: a template is tagged only once its build is ready, so a run refuses a cut-off one
    session.kept = f"nothing {arguments.backend} can use was made; run `sandbox build {arguments.backend}` again"
    return build_sandbox(
        arguments.backend,
        arguments.base,
        arguments.domain,
        arguments.collections_dir,
        session.console,
        limits,
        arguments.closed_book,
    )


def _plain_printer(console: Console) -> Callable[[str], None]:
    """Build logs are printed as written, never read as rich markup."""
    return lambda line: console.print(line, markup=False, highlight=False)


def build_sandbox(
    backend: str,
    base: str | None,
    domain: str | None,
    collections_dir: Path,
    console: Console,
    limits: ResourceLimits | None = None,
    closed_book: bool = False,
) -> int:
    """`limits`: e2b only, the CPUs and memory baked into the template (default: a run's defaults);
    `closed_book`: e2b only, the template without documents."""
    if backend == "docker":
        from harness.sandboxes.recipe import build_image

        try:
            tag = build_image(docker_client(), base, _plain_printer(console))
        except (RuntimeError, OSError) as error:
            console.print(Text.assemble(("error:", "red"), f" {error}"))
            return EXIT_FAILED
        console.print(f"image ready: {tag}")
        return EXIT_OK
    from harness.inputs.tasks import collection_path
    from harness.sandboxes.closed_book import CLOSED_BOOK_TEMPLATE, empty_documents, remove_empty_documents
    from harness.sandboxes.e2b.sandbox import default_sdk
    from harness.sandboxes.e2b.templates import TemplateResources, build_template

    if not domain and not closed_book:
        raise InputError("sandbox build e2b: --domain or --closed-book is required (one template per domain)")
    try:
        resources = TemplateResources.from_limits(limits or ResourceLimits())
        name = CLOSED_BOOK_TEMPLATE if closed_book else str(domain)
        collection = empty_documents() if closed_book else collection_path(collections_dir, name)
        try:
            reference = build_template(default_sdk(), name, collection, resources, _plain_printer(console))
        finally:
            if closed_book:
                remove_empty_documents(collection)
    except SandboxError as error:
        raise InputError(str(error)) from None
    console.print(f"template ready: {reference}", markup=False)
    return EXIT_OK


def cleanup_sandboxes(console: Console, runs: list[Path]) -> int:
    """Leftovers of runs that are gone: local cgroups, Docker containers, E2B sandboxes (a local sandbox leaves
    nothing on disk: its tree lives in its holder's namespace); with RUN folders, every E2B sandbox their starts
    left, on whichever host made it."""
    from harness.records.run_folder import find_run_folder
    from harness.sandboxes.docker.sandbox import cleanup_orphans
    from harness.sandboxes.limits import release_stale_cgroups

    folders = [find_run_folder(path) for path in runs]  # bad input refused before anything is removed
    run_ids = [folder.read_record().run_id for folder in folders]
    api_key = os.environ.get("E2B_API_KEY")
    if folders and not api_key:
        raise InputError(f"sandbox cleanup {runs[0]}: E2B_API_KEY is not set; the run's E2B sandboxes need it")
    console.print(f"local: removed {release_stale_cgroups()} cgroups")
    try:
        removed = cleanup_orphans(docker_client())
        console.print(f"docker: removed {len(removed)} orphaned containers {' '.join(removed)}".rstrip())
    except InputError as error:
        console.print(f"docker: skipped ({error})", markup=False)
    if not api_key:
        console.print("e2b: skipped (E2B_API_KEY not set)")
        return EXIT_OK
    from harness.sandboxes.e2b.sandbox import default_sdk, reap_orphans

    sdk = default_sdk()
    try:
        killed = reap_orphans(sdk, api_key)
    except SandboxError as error:
        console.print(f"e2b: skipped ({error})", markup=False)
        return EXIT_FAILED
    console.print(f"e2b: killed {len(killed)} orphaned sandboxes")
    failed = False
    for folder, run_id in zip(folders, run_ids, strict=True):
        failed |= not _sweep_run_folder(folder, run_id, sdk, api_key, console)
    return EXIT_FAILED if failed else EXIT_OK


def _sweep_run_folder(folder: RunFolder, run_id: str, sdk: Any, api_key: str, console: Console) -> bool:
    """Kill what the folder's recorded starts left running; False when the service could not be asked."""
    from harness.run.leftovers import Leftovers
    from harness.sandboxes.e2b.sandbox import kill_invocations

    try:
        lock = folder.lock()
    except InputError:
        console.print(f"e2b: {folder.path}: skipped (a runner holds it: its sandboxes are in use)", markup=False)
        return True
    try:
        leftovers = Leftovers(folder, functools.partial(kill_invocations, sdk, api_key, run_id))
        killed = leftovers.sweep(console)
    finally:
        lock.release()
    if folder.read_invocations():
        return False
    if not killed:
        console.print(f"e2b: {folder.path}: nothing left running", markup=False)
    return True
