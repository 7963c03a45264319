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
    return parser


def handle(arguments: argparse.Namespace, session: Session) -> int:
    from harness.analysis.report import write_report

    write_report(arguments.runs, arguments.out, session.console)
    return EXIT_OK
