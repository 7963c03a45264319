"""`python -m harness report RUN...`: accuracy tables and plots from run folders."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli.command import EXIT_OK, Session
from harness.cli.parser import Parser
from harness.core.extras import require_extra


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="python -m harness report",
        description="Accuracy tables (Markdown, CSV) and plots from one or more run folders (shards or models). "
        "Prints a few lines and the path of report.md.",
    )
    parser.add_argument(
        "runs", type=Path, nargs="+", metavar="RUN", help="run folders, sweep folders or any folders of run folders"
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="output folder (default: RUN/report for one run folder, else <folder>-report beside the folder "
        "holding the runs, e.g. results/sweep1-report)",
    )
    parser.add_argument(
        "--label",
        action="append",
        default=[],
        metavar="RUN=LABEL",
        help="call the run folder RUN (its path or name) LABEL in the tables (repeatable); runs under one label "
        "are merged as shards",
    )
    parser.add_argument(
        "--prices",
        type=Path,
        metavar="FILE.yaml",
        help="re-price the runs from their recorded tokens (the --prices format of a run)",
    )
    return parser


def handle(arguments: argparse.Namespace, session: Session) -> int:
    require_extra("analysis", "report")
    from harness.analysis.report import write_report
    from harness.analysis.run_selection import default_report_folder, run_folders, run_labels
    from harness.run.recompute.repricing import repricing

    selection = run_folders(arguments.runs)
    runs = selection.runs
    names = run_labels(arguments.label, runs)
    change = repricing(arguments.prices) if arguments.prices else None
    out = arguments.out or default_report_folder(arguments.runs, runs)
    from harness.inputs.retrieval.chunks import document_kinds_and_tokens

    write_report(runs, out, session.console, change, names, selection.left_out, document_kinds_and_tokens)
    return EXIT_OK
