"""The command-line reference page, generated from the code: `RunConfig`'s fields (type, default, range, choices,
help) and the argparse parser of every command. Never written by hand, never committed: MkDocs runs this file as
a hook (`mkdocs.yml`) and adds the page to the site at build time; `python scripts/cli_reference.py` prints it."""

from __future__ import annotations

import argparse
import dataclasses
import html
from collections.abc import Iterator
from typing import Any

from harness.cli.main import COMMANDS, RUN
from harness.inputs.config import flag_of, setting_fields

PAGE = "reference/cli.md"
"""Where the page lies in the site (`docs/` holds no such file)."""


def command_parsers() -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every parser of the command line, with the words that reach it: the run's, each command's, and each
    subcommand's (`sandbox build`), in the order the top-level --help lists them."""
    yield "", RUN.build_parser()
    for name, command in COMMANDS.items():
        yield from _with_subcommands(f" {name}", command.build_parser())


def _with_subcommands(words: str, parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield words, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, subparser in action.choices.items():
                yield from _with_subcommands(f"{words} {name}", subparser)


def documented_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The parser's options and positional arguments (argparse's own --help and the subcommand choice aside)."""
    return [
        action
        for action in parser._actions
        if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction))
    ]


def subcommand_helps(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Each subcommand of the parser with the one line its parent's --help shows for it."""
    return {
        choice.dest: choice.help or ""
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
        for choice in action._choices_actions
    }


def _cell(text: object) -> str:
    """Help text as one table cell: its `code` spans kept, HTML and emphasis characters shown as written."""
    parts = str(text).replace("\n", " ").split("`")
    for i in range(0, len(parts), 2):  # outside the code spans
        parts[i] = html.escape(parts[i], quote=False).replace("*", "\\*")
    return "`".join(parts).replace("|", "\\|")


def _code(text: object) -> str:
    """A code span in a table cell: its pipes stay as they are (the table reads a code span whole)."""
    return "`" + str(text).replace("\n", " ") + "`"


def _setting_default(spec: dataclasses.Field[Any]) -> str:
    if spec.default is not dataclasses.MISSING:
        return "" if spec.default in (None, "") else _code(spec.default)
    factory = spec.default_factory
    if factory in (list, dict):
        return ""
    # a named factory's docstring opens with the rule it follows, e.g. "`HARNESS_TASKS_DIR`, else tasks/: ..."
    return _cell((factory.__doc__ or "").split(": ")[0])  # type: ignore[union-attr]


def settings_section() -> list[str]:
    lines = [
        "## Settings of a run",
        "",
        "Every setting of `python -m harness` (running a batch) is a field of `RunConfig`",
        "(`harness/inputs/config.py`): give it as its flag, or as `name: value` in a `--config FILE.yaml`",
        "(`max-turns` or `max_turns`); flags win. Every value is range-checked, from a flag or a file.",
        "",
        "| flag | meaning | setting, type, default, allowed |",
        "|---|---|---|",
    ]
    for spec in setting_fields():
        meta = spec.metadata
        flag = _code(flag_of(spec.name)) if meta["cli"] else "(config file only)"
        if meta["cli"] and meta["metavar"]:
            flag = _code(f"{flag_of(spec.name)} {meta['metavar']}")
        allowed = ", ".join(_code(choice) for choice in meta["choices"] or ()) or _cell(meta["bound"] or "")
        facts = [_code(f"{spec.name}: {spec.type}"), _setting_default(spec) and "default " + _setting_default(spec)]
        facts.append(allowed and ("one of " + allowed if meta["choices"] else allowed))
        row = [flag, _cell(meta["help"]), "<br>".join(fact for fact in facts if fact)]
        lines.append("| " + " | ".join(row) + " |")
    return lines


def _invocation(action: argparse.Action) -> str:
    if not action.option_strings:
        return _code(action.metavar or action.dest)
    names = ", ".join(action.option_strings)
    if action.nargs == 0:
        return _code(names)
    return _code(f"{names} {action.metavar or action.dest.upper()}")


def _action_notes(action: argparse.Action) -> str:
    notes = []
    if action.choices is not None and not isinstance(action.choices, dict):
        notes.append("one of " + ", ".join(_code(choice) for choice in action.choices))
    if action.required and action.option_strings:
        notes.append("required")
    if isinstance(action, argparse._AppendAction):
        notes.append("repeatable")
    if action.default not in (None, False, [], argparse.SUPPRESS) and action.nargs != 0:
        notes.append("default " + _code(action.default))
    return "; ".join(notes)


def command_section(words: str, parser: argparse.ArgumentParser) -> list[str]:
    title = f"python -m harness{words}"
    lines = [f"{'##' if words.count(' ') < 2 else '###'} `{title}`", ""]
    if parser.description:
        lines += [parser.description, ""]
    lines += ["```text", parser.format_usage().removeprefix("usage: ").strip(), "```", ""]
    subcommands = subcommand_helps(parser)
    if subcommands:
        lines += ["| command | what it does |", "|---|---|"]
        lines += [f"| {_code(f'{title} {name}')} | {_cell(text)} |" for name, text in subcommands.items()]
        lines.append("")
    actions = documented_actions(parser)
    if actions and words:  # the run's own flags are the settings table above
        lines += ["| argument | meaning | notes |", "|---|---|---|"]
        lines += [f"| {_invocation(a)} | {_cell(a.help or '')} | {_action_notes(a)} |" for a in actions]
        lines.append("")
    if parser.epilog:
        lines += [parser.epilog, ""]
    return lines


def reference_page() -> str:
    lines = [
        "# Command-line reference",
        "",
        "Generated from the code at every build of this site (`scripts/cli_reference.py`): the settings from",
        "`RunConfig`, every command from its argparse parser. `python -m harness --help` and each command's",
        "`--help` say the same.",
        "",
        *settings_section(),
        "",
    ]
    for words, parser in command_parsers():
        lines += command_section(words, parser)
    return "\n".join(lines).rstrip() + "\n"


def on_files(files: Any, config: Any) -> Any:
    """MkDocs hook: the page joins the site's files, built from the code as it is now."""
    from mkdocs.structure.files import File

    files.append(File.generated(config, PAGE, content=reference_page()))
    return files


if __name__ == "__main__":
    print(reference_page(), end="")
