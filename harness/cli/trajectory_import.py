"""`python -m harness import FORMAT PATH... --run-id ID`: its flags; the import is `interop/run_import.py`'s
engine, over the format `interop/formats.py` names."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli.arguments import (
    add_collections_dir,
    add_judge_panel,
    add_results_dir,
    add_tasks_dir,
    add_trajectory_format,
)
from harness.cli.command import Session
from harness.cli.parser import Parser


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="python -m harness import",
        description="A run folder from another agent's trajectory files: rows graded by our graders; "
        "files matching no task are listed.",
    )
    add_trajectory_format(parser)
    parser.add_argument(
        "paths",
        type=Path,
        nargs="+",
        metavar="PATH",
        help="*.traj.json files (mini-swe-agent), *.eval logs (inspect), Harbor trials' result.json (harbor) or "
        "folders of them (a Harbor job folder)",
    )
    parser.add_argument("--run-id", required=True, metavar="ID", help="the new run folder's name")
    add_tasks_dir(parser)
    add_collections_dir(parser)
    add_results_dir(parser)
    add_judge_panel(parser, required=False)  # needed only for tasks graded by 'judge'
    _add_read_limits(parser)
    return parser


def _add_read_limits(parser: argparse.ArgumentParser) -> None:
    """Past one of these, reading a file is refused (a small zipped log can hold gigabytes of JSON)."""
    from harness.interop.run_import import READ_MEMORY_MB, READ_SECONDS

    limits = parser.add_argument_group("limits per file read")
    limits.add_argument(
        "--max-memory",
        type=int,
        metavar="MB",
        default=READ_MEMORY_MB,
        help=f"memory of the process reading it (default: {READ_MEMORY_MB})",
    )
    limits.add_argument(
        "--max-time",
        type=float,
        metavar="S",
        default=READ_SECONDS,
        help=f"seconds reading it may take (default: {READ_SECONDS:g})",
    )


def handle(arguments: argparse.Namespace, session: Session) -> int:
    from harness.core.bounded import Limits
    from harness.interop.formats import trajectory_format
    from harness.interop.run_import import ImportOptions, import_files
    from harness.run.judging.judges import JudgeOptions

    judges = JudgeOptions(arguments.judge, arguments.judge_quorum, arguments.judge_api_base, arguments.judge_timeout)
    judge = judges.panel(arguments.results_dir, "") if arguments.judge else None
    options = ImportOptions(
        arguments.paths,
        arguments.tasks_dir,
        arguments.collections_dir,
        arguments.results_dir,
        arguments.run_id,
        judge,
        Limits(arguments.max_memory, arguments.max_time),
    )
    return import_files(trajectory_format(arguments.format), options, session.console)
