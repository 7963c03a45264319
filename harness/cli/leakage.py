"""`python -m harness leakage [--domain LIST]`: tasks whose gold, solution or id is printed in their collection."""

from __future__ import annotations

import argparse

from harness.cli.arguments import add_collections_dir, add_tasks_dir
from harness.cli.command import EXIT_FAILED, EXIT_OK, Session


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m harness leakage",
        description="Tasks whose gold answer, solution or id is printed in their collection. Exit code 0: none "
        "(or only golds a task allows with `leak_allow`); 1: some; 2: bad input.",
    )
    parser.add_argument("--domain", default="all", metavar="LIST", help="domains, comma-separated, or all (default)")
    add_tasks_dir(parser)
    add_collections_dir(parser)
    return parser


def handle(arguments: argparse.Namespace, session: Session) -> int:
    """Every leak on its own line, then the count; EXIT_FAILED when a leak is not allowed by its task."""
    from harness.inputs.leakage import find_leaks
    from harness.inputs.tasks import collection_path, load_task_file, resolve_domains

    domains = resolve_domains(arguments.domain, arguments.tasks_dir)
    tasks = [task for domain in domains for task in load_task_file(arguments.tasks_dir / f"{domain}.jsonl")]
    hits = find_leaks(tasks, {domain: collection_path(arguments.collections_dir, domain) for domain in domains})
    for hit in hits:
        note = f" (allowed: {hit.allowed})" if hit.allowed else ""
        session.console.print(f"{hit.domain}/{hit.task_id}: {hit.what} printed in {hit.document}{note}",
                              markup=False, highlight=False, soft_wrap=True)  # fmt: skip
    counted = sum(hit.allowed is None for hit in hits)
    session.console.print(f"{len(tasks)} tasks checked: {counted} leaks, {len(hits) - counted} allowed", markup=False)
    return EXIT_FAILED if counted else EXIT_OK
