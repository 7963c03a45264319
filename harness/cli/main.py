"""`python -m harness ...`: the command table and the dispatcher, the one place where bad input, Ctrl-C and
SIGTERM become exit codes. Each command's arguments and work are in its own module."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading

from rich.console import Console
from rich.text import Text

from harness.cli import (
    annotate,
    collection,
    leakage,
    replay,
    report,
    run,
    sandbox_admin,
    show,
    tasks,
    trajectory_export,
    trajectory_import,
    view,
)
from harness.cli.command import EXIT_INPUT_ERROR, EXIT_INTERRUPTED, Command, Session
from harness.cli.flag_hints import unknown_flag_hint
from harness.core.abandon import StoppedWithoutWaiting
from harness.core.errors import InputError
from harness.core.safe_text import for_terminal

RUN = Command("run", "run a batch (no command name)", run.build_parser, run.handle, stops_cleanly=True)
"""The command without a name: its flags are the top-level ones."""

COMMANDS: dict[str, Command] = {
    command.name: command
    for command in (
        Command(
            "replay",
            "re-execute logged episodes and compare, or re-grade them from the logs",
            replay.build_parser,
            replay.handle,
        ),
        Command(
            "report", "accuracy tables (Markdown, CSV) and plots from run folders", report.build_parser, report.handle
        ),
        Command("view", "browse runs: served on loopback, or written as files to host", view.build_parser, view.handle),
        Command("show", "one trajectory in the terminal, turn by turn", show.build_parser, show.handle),
        Command(
            "annotate",
            "the five failure modes of each wrong episode, by a judge panel",
            annotate.build_parser,
            annotate.handle,
        ),
        Command(
            "sandbox",
            "build the Docker image or an E2B template; clean up leftovers",
            sandbox_admin.build_parser,
            sandbox_admin.handle,
            stops_cleanly=True,
        ),
        Command(
            "collection",
            "build a collection from raw documents; documents, bytes and tokens",
            collection.build_parser,
            collection.handle,
            stops_cleanly=True,
        ),
        Command(
            "import",
            "a run folder from mini-swe-agent trajectories or inspect_ai logs",
            trajectory_import.build_parser,
            trajectory_import.handle,
        ),
        Command(
            "export",
            "runs as mini-swe-agent trajectories or inspect_ai .eval logs",
            trajectory_export.build_parser,
            trajectory_export.handle,
        ),
        Command(
            "leakage",
            "tasks whose gold, solution or id is printed in their collection",
            leakage.build_parser,
            leakage.handle,
        ),
        Command(
            "tasks", "import another benchmark's tasks and collections (MuDABench)", tasks.build_parser, tasks.handle
        ),
    )
}
"""Every command besides running a batch, in the order the top-level --help lists them."""


def build_parser() -> argparse.ArgumentParser:
    """The run's flags and, as subcommands, every other command (so the top-level --help lists them)."""
    parser = RUN.build_parser()
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    for command in COMMANDS.values():
        commands.add_parser(command.name, help=command.help, add_help=False, parents=[command.build_parser()])
    return parser


def _columns_given() -> bool:
    """Whether COLUMNS says how wide to print (rich reads it): a pipe or a log is otherwise 140 wide."""
    return os.environ.get("COLUMNS", "").isdigit()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] and argv[0] in COMMANDS:
        command, parser, given = COMMANDS[argv[0]], COMMANDS[argv[0]].build_parser(), argv[1:]
    else:
        command, parser, given = RUN, build_parser(), argv
    if (hint := unknown_flag_hint(parser, given)) is not None:
        Console(stderr=True).print(Text.assemble(("error:", "red"), f" {hint}"), highlight=False, soft_wrap=True)
        return EXIT_INPUT_ERROR
    arguments = parser.parse_args(given)
    session = Session(Console() if sys.stdout.isatty() or _columns_given() else Console(width=140))
    if command.stops_cleanly:
        _stop_on_interrupt_signals()
    try:
        return command.handle(arguments, session)
    except InputError as error:
        # the message quotes user data: no markup, no escape sequence, one line
        message = Text.assemble(("error:", "red"), " " + for_terminal(str(error), keep_newlines=False))
        Console(stderr=True).print(message, highlight=False, soft_wrap=True)
        return EXIT_INPUT_ERROR
    except KeyboardInterrupt as stop:
        if not command.stops_cleanly:
            raise
        Console(stderr=True).print("; ".join(filter(None, ["interrupted", session.kept])), markup=False)
        if isinstance(stop, StoppedWithoutWaiting):  # nor for the threads of the episodes still ending
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(EXIT_INTERRUPTED)
        return EXIT_INTERRUPTED


def _stop_on_interrupt_signals() -> None:
    """SIGTERM is handled like Ctrl-C, and SIGINT always stops the command cleanly, even where the runner was
    started with it ignored (a background job of a script inherits SIGINT ignored, so `kill -INT` would
    otherwise do nothing)."""
    if threading.current_thread() is threading.main_thread():  # signal handlers live in the main thread only
        signal.signal(signal.SIGTERM, _interrupt)
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    sys.exit(main())
