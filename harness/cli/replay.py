"""`python -m harness replay PATH [--regrade]`: re-execute logged episodes and compare, or grade them again."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli.command import EXIT_FAILED, EXIT_OK, Session
from harness.cli.parser import Parser


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="python -m harness replay",
        description="Re-execute logged episodes with their logged replies and compare every observation and "
        "verdict, or (--regrade) grade the logged submissions again without running anything.",
    )
    parser.add_argument("path", type=Path, help="a trajectory file (episodes/<domain>/<task>.jsonl) or a run folder")
    parser.add_argument(
        "--regrade", action="store_true", help="re-grade from the logs alone; write results.regraded.jsonl"
    )
    return parser


def handle(arguments: argparse.Namespace, session: Session) -> int:
    """EXIT_FAILED when a re-executed episode differs from its log."""
    from harness.run.replay import reexecute, regrade

    if arguments.regrade:
        regrade(arguments.path, session.console)
        return EXIT_OK
    return EXIT_FAILED if reexecute(arguments.path, session.console) else EXIT_OK
