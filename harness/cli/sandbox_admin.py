"""`python -m harness sandbox build|cleanup`: build the recipe's image or templates; reap orphans."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from harness.cli.arguments import add_collections_dir
from harness.cli.command import EXIT_FAILED, EXIT_OK, Session
from harness.cli.parser import Parser
from harness.core.errors import InputError
from harness.sandboxes.backend import BuildRequest
from harness.sandboxes.base import SandboxError
from harness.sandboxes.limits import ResourceLimits
from harness.sandboxes.registry import backend_class, backend_names

if TYPE_CHECKING:
    from harness.records.run_folder import RunFolder
    from harness.run.sandboxing.leftovers import Leftovers


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m harness sandbox", description="Build and clean up sandboxes.")
    commands = parser.add_subparsers(dest="action", required=True)
    build = commands.add_parser(
        "build", help="build the Docker image or a domain's E2B template from sandbox_templates/"
    )
    names = "{" + ",".join(backend_names()) + "}"
    build.add_argument(
        "backend", metavar=names, help="what to build: the Docker image or an E2B template (local: nothing)"
    )
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
        "--sandbox",
        action="append",
        metavar=names,
        help="only this backend's leftovers (repeatable; default: every backend)",
    )
    cleanup.add_argument(
        "runs",
        nargs="*",
        type=Path,
        metavar="RUN",
        help="also kill what these run folders' starts left running, on any host (e2b; a folder a runner "
        "holds is refused)",
    )
    return parser


def handle(arguments: argparse.Namespace, session: Session) -> int:
    if arguments.action == "cleanup":
        return _cleanup_sandboxes(session.console, arguments.runs, arguments.sandbox or list(backend_names()))
    limits = ResourceLimits(memory_mb=arguments.memory_mb, cpus=arguments.cpus)
    # what Ctrl-C leaves: a template is tagged only once its build is ready, so a run refuses a cut-off one
    session.kept = f"nothing {arguments.backend} can use was made; run `sandbox build {arguments.backend}` again"
    return _build_sandbox(
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


def _build_sandbox(
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
    builder = backend_class(backend, "sandbox build")
    from harness.inputs.tasks import collection_path

    collection = collection_path(collections_dir, domain) if domain and not closed_book else None
    request = BuildRequest(
        base=base, domain=domain, collection=collection, closed_book=closed_book, limits=limits or ResourceLimits()
    )
    try:
        ready = builder.build(request, _plain_printer(console))
    except SandboxError as error:
        console.print(Text.assemble(("error:", "red"), f" {error}"))
        return EXIT_FAILED
    console.print(ready, markup=False)
    return EXIT_OK


def _cleanup_sandboxes(console: Console, runs: list[Path], backends: list[str]) -> int:
    """Leftovers of runs that are gone, each backend's (local cgroups, Docker containers, E2B sandboxes; a
    local sandbox leaves nothing on disk: its tree lives in its holder's namespace); with RUN folders, every
    sandbox their starts left, on whichever host made it."""
    from harness.records.run_folder import find_run_folder

    classes = [backend_class(name, "sandbox cleanup --sandbox") for name in backends]
    # bad input refused before anything is removed
    sweeps = [_run_sweep(find_run_folder(path)) for path in runs]
    failed = False
    for backend in classes:
        try:
            console.print(f"{backend.name}: {backend.clean_up()}", markup=False)
        except InputError as error:
            console.print(f"{backend.name}: skipped ({error})", markup=False)
        except SandboxError as error:
            console.print(f"{backend.name}: skipped ({error})", markup=False)
            failed = True
    for folder, sweep in sweeps:
        if sweep is not None:
            failed |= not _sweep_run_folder(folder, sweep, console)
    return EXIT_FAILED if failed else EXIT_OK


def _run_sweep(folder: RunFolder) -> tuple[RunFolder, Leftovers | None]:
    """The folder and what kills what its starts left (None where its backend leaves nothing running)."""
    from harness.run.sandboxing.leftovers import Leftovers

    record = folder.read_record()
    name = record.config.sandbox or "local"
    kill = backend_class(name, f"sandbox cleanup {folder.path}: its --sandbox").leftovers_of(record.run_id)
    return folder, None if kill is None else Leftovers(folder, name, kill)


def _sweep_run_folder(folder: RunFolder, leftovers: Leftovers, console: Console) -> bool:
    """Kill what the folder's recorded starts left running; False when the service could not be asked."""
    name = leftovers.backend
    try:
        lock = folder.lock()
    except InputError:
        console.print(f"{name}: {folder.path}: skipped (a runner holds it: its sandboxes are in use)", markup=False)
        return True
    try:
        killed = leftovers.sweep(console)
    finally:
        lock.release()
    if folder.read_invocations():
        return False
    if not killed:
        console.print(f"{name}: {folder.path}: nothing left running", markup=False)
    return True
