"""`python -m harness tasks import FORMAT ...`: each format's flags, from the format table
(harness/inputs/importers/formats.py); the import itself is the engine's (harness/inputs/importers/engine.py)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.cli.arguments import add_collections_dir, add_tasks_dir
from harness.cli.command import EXIT_FAILED, EXIT_OK, Session
from harness.cli.parser import Parser

if TYPE_CHECKING:
    from harness.analysis.dataset_counts import DatasetItem
from harness.core.errors import InputError
from harness.core.extras import require_extra
from harness.inputs.importers.formats import FORMATS, TaskFormat, option_fields, task_format
from harness.inputs.tasks import Task, load_task_file


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m harness tasks", description="Import other benchmarks' tasks, or count a task set.")
    commands = parser.add_subparsers(dest="action", required=True)
    stats = commands.add_parser(
        "stats",
        help="a task set's counts as FinDocMRE's paper gives its own (Table 2, Figure 3)",
        description="Questions and documents by language, questions by type, charts per question, pages, reasoning "
        "trace lengths, questions by domain and reasoning type: Markdown (printed, and OUT/dataset.md), LaTeX and a "
        "figure (PNG, PDF) in OUT.",
    )
    stats.add_argument("--domain", required=True, metavar="NAME", help="the task file's domain (tasks/NAME.jsonl)")
    add_tasks_dir(stats)
    stats.add_argument("--out", type=Path, metavar="DIR", help="where the tables and figure go (default: NAME-stats)")
    imports = commands.add_parser("import", help="write a task file and its collections from a benchmark's data")
    formats = imports.add_subparsers(dest="format", required=True)
    for name in FORMATS:
        _add_format(formats, task_format(name))
    return parser


def _add_format(formats: argparse._SubParsersAction[Parser], form: TaskFormat[Any, Any]) -> None:
    parser = formats.add_parser(
        form.name,
        help=form.help,
        description="Exit code 0: all imported; 1: some tasks skipped (listed with the reason); 2: bad input.",
    )
    parser.add_argument("data", type=Path, nargs="+", metavar=form.data_metavar, help=form.data_help)
    parser.add_argument("--pdf-dir", type=Path, required=True, metavar="DIR", help=f"the PDFs, named {form.pdf_names}")
    parser.add_argument("--domain", required=True, metavar="NAME", help="the task file's domain (tasks/NAME.jsonl)")
    add_tasks_dir(parser)
    add_collections_dir(parser)
    parser.add_argument("--workers", type=int, default=1, metavar="N", help="conversion processes (default: 1)")
    for spec in option_fields(form.options):
        flag, help_text = spec.metadata["flag"], spec.metadata["help"]
        if spec.type in (bool, "bool"):
            parser.add_argument(flag, dest=spec.name, action="store_true", help=help_text)
        else:
            kind = int if spec.type in (int, "int") else str
            parser.add_argument(
                flag, dest=spec.name, type=kind, default=spec.default, metavar=spec.metadata["metavar"], help=help_text
            )


def handle(arguments: argparse.Namespace, session: Session) -> int:
    if arguments.action == "stats":
        return _stats(arguments, session)
    from harness.inputs.importers.engine import ImportRequest, import_tasks

    form = task_format(arguments.format)
    options = form.options(**{spec.name: getattr(arguments, spec.name) for spec in option_fields(form.options)})
    request = ImportRequest(
        arguments.data,
        arguments.pdf_dir,
        arguments.domain,
        arguments.tasks_dir,
        arguments.collections_dir,
        arguments.workers,
    )
    result = import_tasks(form, request, options, session.console)
    return EXIT_OK if result.complete else EXIT_FAILED


def _stats(arguments: argparse.Namespace, session: Session) -> int:
    require_extra("analysis", "tasks stats")
    from harness.analysis.dataset_counts import write_counts

    path = arguments.tasks_dir / f"{arguments.domain}.jsonl"
    tasks = load_task_file(path) if path.is_file() else []
    if not tasks:
        raise InputError(f"tasks stats: {path} holds no tasks" if path.is_file() else f"tasks stats: no {path}")
    out = arguments.out or Path(f"{arguments.domain}-stats")
    session.console.print(write_counts([_counted(task) for task in tasks], out), markup=False, highlight=False)
    session.console.print(f"written to {out}/ (dataset.md, findocmre_table2.tex, findocmre_figure3.tex, .png, .pdf)")
    return EXIT_OK


def _counted(task: Task) -> DatasetItem:
    from harness.analysis.dataset_counts import DatasetItem

    trace = task.metadata.get("reasoning_trace")
    pages = task.metadata.get("pages")
    return DatasetItem(
        type=task.type,
        language=task.groups.get("language"),
        domain=task.groups.get("financial domain"),
        reasoning=task.groups.get("reasoning type"),
        charts=len(task.metadata.get("chart_ids") or []),
        document=task.evidence[0] if task.evidence else task.id,
        pages=pages if isinstance(pages, int) else None,
        trace=" ".join(map(str, trace)) if isinstance(trace, list) else None,
    )
