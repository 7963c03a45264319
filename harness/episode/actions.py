"""Read the one action out of a model reply (its one tool call, or the text format's one bash block) and each
tool's argument, or say what is wrong with it."""

from __future__ import annotations

import re
from collections.abc import Sequence

from harness.core.fences import scan_fences
from harness.core.reply import ToolCall
from harness.core.untrusted_json import UnreadableJson, read_json
from harness.models.base import ModelReply

MAX_TEXT_REPLY_CHARS = 1_000_000
"""Longer `text` replies are a format error: no command needs that much, and parsing stays bounded."""
_SHELLS = ("bash", "sh", "shell")
_NOT_RUNNABLE = re.compile("[\x00\ud800-\udfff]")
"""A NUL (no argument of a program can hold one) or a lone surrogate (no bytes encode it): no backend could run
the command as written, so it is refused here, the same on every backend, before any sandbox sees it."""


NO_TOOL_CALL = "no bash tool call and no answer"
"""The problem of a `toolcall` reply holding neither (a server that does not give the model its tools)."""


class FormatError(ValueError):
    """The reply holds no runnable action, or more than one."""


def the_one_call(reply: ModelReply, offered: Sequence[str]) -> ToolCall:
    """The reply's one call of an OFFERED tool (by name); a `FormatError` when it makes none, several, or calls
    another."""
    if not reply.tool_calls:
        raise FormatError(NO_TOOL_CALL)
    if len(reply.tool_calls) > 1:
        raise FormatError(f"{len(reply.tool_calls)} tool calls in one reply; make exactly one")
    call = reply.tool_calls[0]
    if call.name not in offered:
        tools = f"the only tool is {offered[0]}" if len(offered) == 1 else f"the tools are {_listed(offered)}"
        raise FormatError(f"unknown tool {call.name!r}; {tools}")
    return call


def parse_tool_command(call: ToolCall) -> str:
    """The command a bash tool call asks to run."""
    try:
        arguments = read_json(call.arguments or "{}")
    except UnreadableJson as error:
        raise FormatError(f'the tool arguments are {error}; send {{"command": "..."}}') from None
    command = arguments.get("command") if isinstance(arguments, dict) else None
    if not isinstance(command, str) or not command.strip():
        raise FormatError("the bash tool needs a non-empty string argument 'command'")
    return _runnable(command)


def parse_text_command(text: str) -> str:
    """The command of a reply's one ```bash block (the text action format)."""
    return _runnable(_from_text(text))


def parse_view_path(call: ToolCall) -> str:
    """The path a view_image call asks to see (`--vision`)."""
    try:
        arguments = read_json(call.arguments or "{}")
    except UnreadableJson as error:
        raise FormatError(f'the view_image arguments are {error}; send {{"path": "..."}}') from None
    path = arguments.get("path") if isinstance(arguments, dict) else None
    if not isinstance(path, str) or not path.strip() or _NOT_RUNNABLE.search(path):
        raise FormatError("the view_image tool needs a non-empty string argument 'path'")
    return path


def _runnable(command: str) -> str:
    if (found := _NOT_RUNNABLE.search(command)) is not None:
        what = "a NUL byte" if found.group() == "\x00" else f"a lone surrogate (U+{ord(found.group()):04X})"
        raise FormatError(f"the command holds {what} at character {found.start() + 1}, which bash cannot run")
    return command


def _listed(names: Sequence[str]) -> str:
    return ", ".join(names[:-1]) + " and " + names[-1]


def _from_text(text: str) -> str:
    if len(text) > MAX_TEXT_REPLY_CHARS:
        raise FormatError(
            f"the reply is {len(text):,} characters, over the limit of {MAX_TEXT_REPLY_CHARS:,}; write a shorter reply"
        )
    blocks = [block for block in scan_fences(text).blocks if block.language in _SHELLS]
    if not blocks:
        raise FormatError("no ```bash block and no answer")
    if len(blocks) > 1:
        raise FormatError(f"{len(blocks)} bash blocks in one reply; write exactly one")
    if not blocks[0].closed:
        raise FormatError("the ```bash block is not closed; end it with a ``` line")
    if not blocks[0].body.strip():
        raise FormatError("the bash block is empty")
    return blocks[0].body.rstrip("\n")
