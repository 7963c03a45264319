"""What a command is to the dispatcher (`cli/main.py`): its entry in the table, what its handler is given, and
the exit codes every command shares."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

from rich.console import Console

EXIT_OK = 0
EXIT_FAILED = 1
"""The command ran, but part of its work failed or found a problem: an episode that ended as our or the
provider's failure (model_error, sandbox_error, harness_error), sources or tasks skipped, leaks found, replayed
episodes that differ, a build that failed, a results file that cannot be written."""
EXIT_INPUT_ERROR = 2
"""Bad input (an `InputError`, or arguments argparse refused): one line on stderr, nothing written."""
EXIT_NOTHING_SELECTED = 3
"""A run whose --task-id, --limit and --shard selected no task: nothing ran, nothing was written."""
EXIT_INTERRUPTED = 130
"""Ctrl-C or SIGTERM stopped a command that stops cleanly."""


@dataclass
class Session:
    """What the dispatcher gives a handler besides its arguments."""

    console: Console
    kept: str | None = None
    """What stays of the work when Ctrl-C or SIGTERM stops the command; the handler says it once it knows."""


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    """The one-line summary the top-level --help lists."""
    build_parser: Callable[[], argparse.ArgumentParser]
    handle: Callable[[argparse.Namespace, Session], int]
    """Does the work and returns the exit code; raises `InputError` on bad input (the dispatcher reports it)."""
    stops_cleanly: bool = False
    """Ctrl-C and SIGTERM raise KeyboardInterrupt in it, which the dispatcher turns into EXIT_INTERRUPTED and
    `Session.kept`; other commands keep Python's defaults."""
