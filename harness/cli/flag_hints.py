"""A flag the command does not have as one line, with the flag meant (`--modle` -> `--model`, `--max-turn` ->
`--max-turns`), before argparse reads the flag's value as a command name and prints its whole usage."""

from __future__ import annotations

import argparse
import difflib
import re

_NEGATIVE_NUMBER = re.compile(r"-\d+$|-\d*\.\d+$")
"""What argparse reads as a value, not a flag."""


def unknown_flag_hint(parser: argparse.ArgumentParser, argv: list[str]) -> str | None:
    """'unknown flag --modle; did you mean --model?' for the first word of `argv` that is a flag the parser
    (or the subcommand named before it) does not have; None when every flag is known (argparse says the rest)."""
    words = iter(argv)
    for word in words:
        if word == "--":
            return None
        if not word.startswith("-") or word == "-" or _NEGATIVE_NUMBER.match(word):
            parser = _subcommand(parser, word) or parser
            continue
        flag = word.split("=", 1)[0]
        action = parser._option_string_actions.get(flag)
        if action is None:
            return _hint(flag, _long_flags(parser))
        if "=" not in word:  # its values are the next words, whatever they look like
            for _ in range(1 if action.nargs is None else action.nargs if isinstance(action.nargs, int) else 0):
                next(words, None)
    return None


def _subcommand(parser: argparse.ArgumentParser, word: str) -> argparse.ArgumentParser | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen: argparse.ArgumentParser | None = action.choices.get(word)
            return chosen
    return None


def _long_flags(parser: argparse.ArgumentParser) -> list[str]:
    return [flag for action in parser._actions for flag in action.option_strings if flag.startswith("--")]


def _hint(flag: str, flags: list[str]) -> str:
    if not flag.startswith("--"):  # `-m`: no flag has a one-letter form
        spelled = [known for known in flags if known.startswith("--" + flag[1:2])]
        return f"unknown flag {flag}; flags are spelled in full" + (f", e.g. {spelled[0]}" if spelled else "")
    longer = [known for known in flags if known.startswith(flag)]
    if len(longer) > 1:
        return f"unknown flag {flag}; did you mean one of {', '.join(longer)}?"
    nearest = longer or difflib.get_close_matches(flag, flags, n=1, cutoff=0.6)
    if nearest:
        return f"unknown flag {flag}; did you mean {nearest[0]}?"
    return f"unknown flag {flag} (--help lists the flags)"
