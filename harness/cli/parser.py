"""The argument parser every command builds: a flag is matched as spelled, never as the start of a longer one
(argparse would take `--max-turn 5` for `--max-turns 5`, or `--epoch 2` for `--epochs 2`, without a word), and
a refusal is one line, not the usage of every flag."""

from __future__ import annotations

import argparse
from typing import Any, NoReturn

from harness.core.safe_text import for_terminal


class Parser(argparse.ArgumentParser):
    """argparse's parser without prefix matching, whose refusals are one line; its subcommands' parsers are of
    this class too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        """argparse's refusal in one line, without the usage of every flag that --help prints."""
        self.exit(2, f"error: {for_terminal(message, keep_newlines=False)} ({self.prog} --help shows the usage)\n")
