"""`python -m harness report RUN...`: accuracy tables and plots from run folders."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli.command import EXIT_OK, Session


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m harness report",
        description="Accuracy tables (Markdown, CSV) and plots from one or more run folders (shards or models).",
    )
    parser.add_argument("runs", type=Path, nargs="+", help="run folders")
    parser.add_argument("--out", type=Path, help="output folder (default: RUN/report, or results/report-<time>)")
    parser.add_argument(
        "--prices",
        type=Path,
        metavar="FILE.yaml",
        help="re-price the runs from their recorded tokens (the --prices format of a run)",
    )
    return parser


def handle(arguments: argparse.Namespace, session: Session) -> int:
    from harness.analysis.report import write_report
    from harness.run.repricing import repricing

    change = repricing(arguments.prices) if arguments.prices else None
    write_report(arguments.runs, arguments.out, session.console, change)
    return EXIT_OK
