"""`python -m harness annotate RUN --judge MODEL[,MODEL...]`: the five failure modes of each wrong episode."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from harness.cli.arguments import add_judge_panel
from harness.cli.command import EXIT_FAILED, EXIT_OK, Session
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
        "--facts-named-only",
        action="store_true",
        help="with --facts: ask only about rows whose document some command named or some output showed (the "
        "others are not stated, without a call; the report says so); default: every row, as MuDABench",
    )
    parser.add_argument(
        "--judge-prompt",
        type=Path,
        metavar="FILE.yaml|NAME",
        help="with --facts: a judge protocol file whose `facts` template, system message and reading rule the "
        "fact judge uses (docs/GRADERS.md §4.2; `mudabench`, a packaged name, is MuDABench's own)",
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
    from harness.run.judging.annotate_failures import TRAJECTORY_CHARS, annotate_run
    from harness.run.judging.judges import JudgeOptions

    chars = arguments.trajectory_chars or TRAJECTORY_CHARS
    if chars < 1000:
        raise InputError(f"--trajectory-chars: {chars} is too small to show a trajectory (at least 1000)")
    options = JudgeOptions(arguments.judge, arguments.judge_quorum, arguments.judge_api_base, arguments.judge_timeout)
    if arguments.facts:
        from rich.console import Console

        from harness.run.judging.annotate_facts import JudgesFailed, annotate_facts

        options = dataclasses.replace(options, prompt=arguments.judge_prompt)
        try:
            annotate_facts(arguments.run, options, session.console, named_only=arguments.facts_named_only)
        except JudgesFailed as error:
            Console(stderr=True).print(f"error: {error}", markup=False, highlight=False, soft_wrap=True)
            return EXIT_FAILED
        return EXIT_OK
    if arguments.facts_named_only or arguments.judge_prompt:
        flag = "--facts-named-only" if arguments.facts_named_only else "--judge-prompt"
        raise InputError(f"{flag}: only with --facts")
    annotate_run(arguments.run, options, chars, session.console)
    return EXIT_OK
