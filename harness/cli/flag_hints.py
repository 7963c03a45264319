"""A mistyped flag as one line with the nearest flag (`--modle` -> `--model`), before argparse reads the
misspelling's value as a command name and prints its whole usage."""

from __future__ import annotations

import argparse
import difflib


def _known_flags(parser: argparse.ArgumentParser) -> list[str]:
    return [flag for action in parser._actions for flag in action.option_strings if flag.startswith("--")]


def unknown_flag_hint(parser: argparse.ArgumentParser, argv: list[str]) -> str | None:
    """'unknown flag --modle; did you mean --model?' for the first flag of `argv` the parser does not know
    and that is close to one it does; None when every flag is known (argparse says the rest)."""
    flags = _known_flags(parser)
    for word in argv:
        if word == "--":
            return None
        flag = word.split("=", 1)[0]
        if not flag.startswith("--") or flag in flags:
            continue
        if any(known.startswith(flag) for known in flags):  # an abbreviation argparse accepts
            continue
        nearest = difflib.get_close_matches(flag, flags, n=1, cutoff=0.6)
        if nearest:
            return f"unknown flag {flag}; did you mean {nearest[0]}?"
    return None
