"""`python -m harness tasks import FORMAT ...`: each format's flags, from the format table
(harness/inputs/importers/formats.py); the import itself is the engine's (harness/inputs/importers/engine.py)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from harness.cli.arguments import add_collections_dir, add_tasks_dir
from harness.cli.command import EXIT_FAILED, EXIT_OK, Session
from harness.cli.parser import Parser
from harness.inputs.importers.formats import FORMATS, TaskFormat, option_fields, task_format


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m harness tasks", description="Import other benchmarks' tasks.")
    commands = parser.add_subparsers(dest="action", required=True)
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
