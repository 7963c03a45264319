"""`python -m harness leakage [--domain LIST]`: tasks whose gold, solution or id is printed in their collection."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli.arguments import add_collections_dir, add_tasks_dir
from harness.cli.command import EXIT_FAILED, EXIT_OK, Session
from harness.cli.parser import Parser
from harness.core.errors import InputError
from harness.core.safe_text import for_terminal


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="python -m harness leakage",
        description="Tasks whose gold answer, solution or id is printed in their collection. Exit code 0: none "
        "(or only golds a task allows with `leak_allow`); 1: some (or, with --closed-book, tasks answered without "
        "documents); 2: bad input.",
    )
    parser.add_argument("--domain", default="all", metavar="LIST", help="domains, comma-separated, or all (default)")
    parser.add_argument(
        "--closed-book",
        type=Path,
        metavar="RUN_DIR",
        help="a --closed-book run: its tasks answered correctly without documents are listed too "
        "(possible contamination or guessable answers) and counted",
    )
    add_tasks_dir(parser)
    add_collections_dir(parser)
    return parser


def handle(arguments: argparse.Namespace, session: Session) -> int:
    """Every leak on its own line, then the count; EXIT_FAILED when a leak is not allowed by its task."""
    from harness.inputs.collections.hashing import listed_names
    from harness.inputs.evidence_files import check_evidence
    from harness.inputs.leakage import find_leaks
    from harness.inputs.tasks import collection_of, collection_path, load_task_file, resolve_domains

    domains = resolve_domains(arguments.domain, arguments.tasks_dir)
    tasks = [task for domain in domains for task in load_task_file(arguments.tasks_dir / f"{domain}.jsonl")]
    # each task's own collection (an imported benchmark's document set), else its domain's
    names = sorted({collection_of(task) for task in tasks})
    collections = {name: collection_path(arguments.collections_dir, name) for name in names}
    check_evidence(tasks, {name: set(listed_names(path)) for name, path in collections.items()}, arguments.tasks_dir)
    hits = find_leaks(tasks, collections)
    for hit in hits:
        note = f" (allowed: {hit.allowed})" if hit.allowed else ""
        line = f"{hit.domain}/{hit.task_id}: {hit.what} printed in {hit.document}{note}"
        session.console.print(for_terminal(line, keep_newlines=False), markup=False, highlight=False, soft_wrap=True)
    counted = sum(hit.allowed is None for hit in hits)
    selected = {(task.domain, task.id) for task in tasks}
    answerable = _closed_book_correct(arguments.closed_book, selected) if arguments.closed_book else []
    for domain, task_id in answerable:
        session.console.print(
            f"{domain}/{task_id}: answered correctly closed-book in {arguments.closed_book}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    leaking = {(hit.domain, hit.task_id) for hit in hits if hit.allowed is None}
    allowed = {(hit.domain, hit.task_id) for hit in hits if hit.allowed is not None} - leaking
    closed = f", {len(answerable)} answered closed-book" if arguments.closed_book else ""
    session.console.print(
        f"{len(tasks)} tasks checked: {len(leaking)} with a leak ({counted} in documents), "
        f"{len(allowed)} allowed{closed}",
        markup=False,
    )
    return EXIT_FAILED if counted or answerable else EXIT_OK


def _closed_book_correct(run: Path, selected: set[tuple[str, str]]) -> list[tuple[str, str]]:
    """The selected tasks a closed-book run answered correctly; a run that is not closed-book is bad input."""
    from harness.records.run_folder import RunFolder

    folder = RunFolder(run)
    if not folder.read_record().config.closed_book:
        raise InputError(
            f"{folder.record_path}: field 'closed_book': --closed-book needs a run made with --closed-book"
        )
    # a task counts when any of its epochs was answered correctly without the documents
    return sorted(
        {
            (domain, task_id)
            for (domain, task_id, _), row in folder.latest_rows().items()
            if (domain, task_id) in selected and row.is_correct()
        }
    )
