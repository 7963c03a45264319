"""An installed agent's own transcript (an `agent_transcript` event) as `show` and the viewer present it: its
messages role by role with the commands each reply ran, or, where it is not a format we read, its text raw.

The transcript is the agent's word (any JSON, a file cut short, hostile text), so reading it never fails and
what it shows is bounded; neutralising the text is the presenter's (`for_terminal`, the page's `textContent`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.core.json_text import json_text
from harness.core.untrusted_json import json_or_none
from harness.records.events import AgentTranscriptEvent

MESSAGE_CHARS = 20_000
"""A message's text, or one command, longer than this is cut, saying how much more there was."""
SHOWN_CHARS = 500_000
"""What one transcript shows of its messages at most; those past it are counted, not shown."""
RAW_CHARS = 20_000
"""What a transcript we cannot read shows of its text."""
NAME_CHARS = 100
"""A role or a format name, cut (it is the agent's text too)."""
_HEADING_CHARS = NAME_CHARS
"""What a message counts towards `SHOWN_CHARS` beside its text and commands: its heading, at most."""
_TEXT_BLOCK = re.compile(r"```mswea_bash_command\s*\n(.*?)\n```", re.DOTALL)
"""mini-swe-agent's command block in a text-based model's reply (its `litellm_textbased` model's `action_regex`)."""


@dataclass(frozen=True)
class TranscriptMessage:
    role: str
    text: str
    commands: list[str]
    """The commands the message ran (an assistant's reply), as the agent recorded them."""


@dataclass(frozen=True)
class TranscriptView:
    agent: str
    version: str
    format: str | None
    """The format the transcript names (`trajectory_format`), None where it names none."""
    messages: list[TranscriptMessage]
    hidden: int
    """Messages past `SHOWN_CHARS`, not shown."""
    ending: str | None
    """How the agent says it ended (mini-swe-agent's `info.exit_status`)."""
    raw: str | None
    """The transcript's text (its JSON, or the file as the agent left it), cut at `RAW_CHARS`, where it cannot be
    read as its format; None where it can."""
    problem: str | None
    """Why it is shown raw."""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def transcript_view(event: AgentTranscriptEvent) -> TranscriptView:
    """EVENT's transcript read as the format it names, else raw, saying why."""
    transcript = event.transcript
    if event.agent == "gemini-cli" and isinstance(transcript, list):
        return _gemini_cli_view(event, transcript)
    if event.agent == "claude-code" and isinstance(transcript, list):
        return _claude_code_view(event, transcript)
    named = transcript.get("trajectory_format") if isinstance(transcript, dict) else None
    form = _cut(named, NAME_CHARS) if isinstance(named, str) else None
    base = TranscriptView(event.agent, event.version, form, [], 0, None, None, None)
    reader = _READERS.get(named) if isinstance(named, str) else None
    if reader is None or not isinstance(transcript, dict):
        problem = "not JSON: the file as the agent left it" if isinstance(transcript, str) else _unnamed(form)
        return dataclasses.replace(base, raw=_raw(transcript), problem=problem)
    listed = transcript.get("messages")
    messages = [message for message in _listed(listed) if isinstance(message, dict)]
    if not isinstance(listed, list) or len(messages) < len(listed):
        return dataclasses.replace(base, raw=_raw(transcript), problem="its messages are not a list of objects")
    shown, hidden = _bounded(messages, reader)
    info = transcript.get("info")
    ending = info.get("exit_status") if isinstance(info, dict) else None
    return dataclasses.replace(
        base, messages=shown, hidden=hidden, ending=_cut(ending, NAME_CHARS) if isinstance(ending, str) else None
    )


def _unnamed(form: str | None) -> str:
    return "it names no format" if form is None else f"{form} is not a format we read"


def _mini_swe_agent_message(message: dict[str, Any]) -> TranscriptMessage:
    """One message of mini-swe-agent's `mini-swe-agent-1.1`: OpenAI-style, its `extra` holding a reply's parsed
    `actions`; the commands from those, else from its bash tool calls, else from its text's command blocks."""
    role, content, extra, calls = (message.get(key) for key in ("role", "content", "extra", "tool_calls"))
    actions = extra.get("actions") if isinstance(extra, dict) else None
    commands = [action["command"] for action in _listed(actions) if isinstance(action, dict) and "command" in action]
    if not commands:
        commands = [command for call in _listed(calls) if (command := _tool_command(call)) is not None]
    if not commands and isinstance(content, str):
        commands = _TEXT_BLOCK.findall(content)
    shown = [_cut(command if isinstance(command, str) else _json(command), MESSAGE_CHARS) for command in commands]
    return TranscriptMessage(_cut(role, NAME_CHARS) if isinstance(role, str) else "(no role)", _text(content), shown)


_READERS: dict[str, Callable[[dict[str, Any]], TranscriptMessage]] = {"mini-swe-agent-1.1": _mini_swe_agent_message}
"""The transcript formats read message by message, by the name the transcript gives its format."""


def _gemini_cli_view(event: AgentTranscriptEvent, events: list[Any]) -> TranscriptView:
    """Gemini CLI's `stream-json` events folded into messages: a reply's pieces (`message` events of one role in a
    row) joined, each `tool_use` a command of the reply before it, each `tool_result` a message of its own; the
    closing `result` says how it ended."""
    folded: list[dict[str, Any]] = []
    ending: Any = None
    for item in events:
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "message":
            role, content = item.get("role"), item.get("content")
            last = folded[-1] if folded else None
            if last is not None and last["role"] == role and not last["commands"] and isinstance(content, str):
                last["parts"].append(content)  # joined once: a million pieces are not a million copies
            else:
                folded.append({"role": role, "parts": [content if isinstance(content, str) else ""], "commands": []})
        elif kind == "tool_use":
            if not folded or folded[-1]["role"] != "assistant":
                folded.append({"role": "assistant", "parts": [], "commands": []})
            parameters = item.get("parameters")
            command = parameters.get("command") if isinstance(parameters, dict) else None
            folded[-1]["commands"].append(command if isinstance(command, str) else _json(parameters))
        elif kind == "tool_result":
            output = item.get("output", item.get("error"))
            folded.append({"role": "tool", "content": output, "commands": []})
        elif kind == "result":
            ending = item.get("status")
    shown, hidden = _bounded(folded, _folded_message)
    ended = _cut(ending, NAME_CHARS) if isinstance(ending, str) else None
    return TranscriptView(event.agent, event.version, "stream-json", shown, hidden, ended, None, None)


def _claude_code_view(event: AgentTranscriptEvent, events: list[Any]) -> TranscriptView:
    """Claude Code's `stream-json` events folded into messages: an `assistant` event's text blocks its reply's
    text, its `tool_use` blocks the reply's commands (the events of one reply, its `message.id`, joined); a `user`
    event's `tool_result` blocks each a message of its own, its text the user's; the closing `result`'s subtype
    says how it ended."""
    folded: list[dict[str, Any]] = []
    ending: Any = None
    reply: Any = None
    for item in events:
        kind = item.get("type") if isinstance(item, dict) else None
        message = item.get("message") if isinstance(item, dict) else None
        blocks = (
            [block for block in _listed(message.get("content")) if isinstance(block, dict)]
            if isinstance(message, dict)
            else []
        )
        if kind == "assistant":
            said = message.get("id") if isinstance(message, dict) else None
            if not folded or folded[-1]["role"] != "assistant" or said is None or said != reply:
                folded.append({"role": "assistant", "parts": [], "commands": []})
            reply = said
            for block in blocks:
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    folded[-1]["parts"].append(block["text"])
                elif block.get("type") == "tool_use":
                    given = block.get("input")
                    command = given.get("command") if isinstance(given, dict) else None
                    folded[-1]["commands"].append(command if isinstance(command, str) else _json(given))
        elif kind == "user":
            reply = None
            for block in blocks:
                if block.get("type") == "tool_result":
                    folded.append({"role": "tool", "content": block.get("content"), "commands": []})
                else:
                    folded.append({"role": "user", "content": [block], "commands": []})
        elif kind == "result":
            ending = item.get("subtype")
    shown, hidden = _bounded(folded, _folded_message)
    ended = _cut(ending, NAME_CHARS) if isinstance(ending, str) else None
    return TranscriptView(event.agent, event.version, "stream-json", shown, hidden, ended, None, None)


def _folded_message(message: dict[str, Any]) -> TranscriptMessage:
    role = message["role"]
    commands = [_cut(command, MESSAGE_CHARS) for command in message["commands"]]
    content = "".join(message["parts"]) if "parts" in message else message["content"]
    return TranscriptMessage(_cut(role, NAME_CHARS) if isinstance(role, str) else "(no role)", _text(content), commands)


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _tool_command(call: Any) -> Any:
    """A tool call's `command` argument; its arguments as they are where they hold none; None for no call."""
    function = call.get("function") if isinstance(call, dict) else None
    arguments = function.get("arguments") if isinstance(function, dict) else None
    found = json_or_none(arguments, MESSAGE_CHARS) if isinstance(arguments, str) else None
    return found["command"] if isinstance(found, dict) and "command" in found else arguments


def _text(content: Any) -> str:
    """A message's content as text: a string as it is, a list of parts as their texts (`[image_url]` for a part
    without text), anything else as its JSON; cut at `MESSAGE_CHARS`."""
    if isinstance(content, str):
        return _cut(content, MESSAGE_CHARS)
    if isinstance(content, list):
        parts = [_part(part) for part in content]
        return _cut("\n".join(parts), MESSAGE_CHARS)
    return "" if content is None else _cut(_json(content), MESSAGE_CHARS)


def _part(part: Any) -> str:
    if isinstance(part, dict) and isinstance(part.get("text"), str):
        return str(part["text"])
    if isinstance(part, dict) and isinstance(part.get("type"), str):
        return f"[{_cut(part['type'], NAME_CHARS)}]"
    return _json(part)


def _bounded(
    messages: list[dict[str, Any]], reader: Callable[[dict[str, Any]], TranscriptMessage]
) -> tuple[list[TranscriptMessage], int]:
    """The first messages, read, that fit in `SHOWN_CHARS`, each counting `_HEADING_CHARS` beside its text and
    commands (a million empty messages are a million headings); how many were left out, unread."""
    shown: list[TranscriptMessage] = []
    used = 0
    for message in map(reader, messages):
        used += _HEADING_CHARS + len(message.text) + sum(map(len, message.commands))
        if used > SHOWN_CHARS:
            break
        shown.append(message)
    return shown, len(messages) - len(shown)


def _raw(transcript: Any) -> str:
    return _cut(transcript if isinstance(transcript, str) else _json(transcript, indent=1), RAW_CHARS)


def _json(value: Any, **options: Any) -> str:
    try:
        return json_text(value, **options)
    except (RecursionError, ValueError):  # nested past what the encoder takes
        return "(nested too deeply to show)"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n… {len(text) - limit:,} more characters"
