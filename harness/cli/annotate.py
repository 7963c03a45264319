"""`python -m harness annotate RUN --judge MODEL[,MODEL...]`: the five failure modes of each wrong episode."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli.arguments import add_judge_panel
from harness.cli.command import EXIT_OK, Session
from harness.cli.parser import Parser


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="python -m harness annotate",
        description="Label every wrong episode of a run with the five failure modes (docs/FAILURE_MODES.md) by a "
        "judge panel; writes RUN/failure_labels.jsonl, never results.jsonl. Judge replies are cached.",
    )
    parser.add_argument("run", type=Path, help="a run folder")
    add_judge_panel(parser, required=True)
    parser.add_argument(
        "--facts",
        action="store_true",
        help="instead of failure modes: which intermediate facts (task field `facts`) each episode stated, by a "
        "judge of the panel per fact row; writes RUN/fact_judgments.jsonl (cached: asking again costs nothing)",
    )
    parser.add_argument(
        "--trajectory-chars",
        type=int,
        default=None,
        help="size of the condensed trajectory a judge reads (default 60,000 characters)",
    )
    return parser


def handle(arguments: argparse.Namespace, session: Session) -> int:
    from harness.core.errors import InputError
    from harness.run.annotate_failures import TRAJECTORY_CHARS, annotate_run
    from harness.run.judges import JudgeOptions

    chars = arguments.trajectory_chars or TRAJECTORY_CHARS
    if chars < 1000:
        raise InputError(f"--trajectory-chars: {chars} is too small to show a trajectory (at least 1000)")
    options = JudgeOptions(arguments.judge, arguments.judge_quorum, arguments.judge_api_base, arguments.judge_timeout)
    if arguments.facts:
        from harness.run.annotate_facts import annotate_facts

        annotate_facts(arguments.run, options, session.console)
        return EXIT_OK
    annotate_run(arguments.run, options, chars, session.console)
    return EXIT_OK
