"""`python -m harness replay PATH [--regrade]`: re-execute logged episodes and compare, or grade them again."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli.command import EXIT_FAILED, EXIT_OK, Session
from harness.cli.parser import Parser
from harness.core.safe_text import for_terminal


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="python -m harness replay",
        description="Re-execute logged episodes with their logged replies and compare every observation and "
        "verdict, or (--regrade) grade the logged submissions again without running anything.",
    )
    parser.add_argument(
        "path",
        type=Path,
        help="a trajectory file (episodes/<domain>/<task>.jsonl), a run folder, a sweep folder or a folder of runs",
    )
    parser.add_argument(
        "--regrade", action="store_true", help="re-grade from the logs alone; write results.regraded.jsonl"
    )
    return parser


def handle(arguments: argparse.Namespace, session: Session) -> int:
    """EXIT_FAILED when a re-executed episode differs from its log."""
    from harness.analysis.run_selection import each_run
    from harness.run.recompute.replay import reexecute, regrade

    runs, differed = each_run(arguments.path), 0
    for run in runs:
        if len(runs) > 1:
            session.console.print(f"{for_terminal(str(run))}:", markup=False, highlight=False, soft_wrap=True)
        if arguments.regrade:
            regrade(run, session.console)
        else:
            differed += reexecute(run, session.console)
    return EXIT_FAILED if differed else EXIT_OK
