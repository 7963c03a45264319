"""A judge reply read as leniently as MuDABench reads it (its common/json_utils.py `robust_parse_json` with
`expected_type="dict"`): the reply itself as JSON, else the first fenced block, else the first balanced `{...}`,
each also after repairing Python literals (`True`, `None`, single quotes) and trailing commas, else the text as
a Python literal. Written from its published rules, not copied."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from typing import Any

from harness.core.untrusted_json import UnreadableJson, json_or_none, read_json

_JSON_FENCE = re.compile(r"```json\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_ANY_FENCE = re.compile(r"```\s*(.*?)```", re.DOTALL)
_REPAIRS = (
    (re.compile(r"\bTrue\b"), "true"),
    (re.compile(r"\bFalse\b"), "false"),
    (re.compile(r"\bNone\b"), "null"),
    (re.compile(r"'([A-Za-z0-9_\- ]+)'\s*:"), r'"\1":'),
    (re.compile(r":\s*'([^']*)'"), r': "\1"'),
    (re.compile(r",\s*([}\]])"), r"\1"),
)
MAX_REPLY_CHARS = 200_000
"""A longer reply is not read (a judge's JSON verdict is short; this bounds the parse)."""


def lenient_object(reply: str, quoted: str = "") -> dict[str, Any] | None:
    """The JSON object a reply holds, found and repaired as MuDABench does; None when there is none.

    QUOTED is the agent's text the judge was shown: an object the reply quotes from it (its text found there
    verbatim, or an object equal to one written there) is the agent's, never the verdict, and is passed over
    for the next one the judge wrote (docs/GRADERS.md §4.2)."""
    reply = reply.strip()
    if not reply or len(reply) > MAX_REPLY_CHARS:
        return None
    agent = _AgentText(quoted)
    try:
        whole = read_json(reply)
    except UnreadableJson:
        pass
    else:  # a reply that is JSON but no object is not searched further
        return whole if isinstance(whole, dict) and not agent.wrote(reply, whole) else None
    fenced = next((text for text in _fences(reply) if not agent.wrote(text, _parsed(text))), None)
    braced = next((text for text in _spans(reply) if not agent.wrote(text, _parsed(text))), None)
    for candidate in (fenced, braced):
        if candidate:
            found = _parsed(candidate)
            if found is not None:
                return found
    value = _literal(fenced or braced or reply)
    return value if isinstance(value, dict) and not agent.wrote("", value) else None


class _AgentText:
    """The agent's text a judge was shown, and the objects written in it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.objects = {_canonical(found) for span in _spans(text) if (found := _parsed(span)) is not None}

    def wrote(self, candidate: str, value: Any) -> bool:
        """Whether CANDIDATE (a reply's object, VALUE once read) is the agent's: its text or its value."""
        if not self.text:
            return False
        quoted = bool(candidate.strip()) and candidate.strip() in self.text
        return quoted or _canonical(value) in self.objects


def _parsed(candidate: str) -> dict[str, Any] | None:
    """The object CANDIDATE is as JSON, else once repaired; None for neither."""
    for text in (candidate, _repaired(candidate)):
        value = json_or_none(text)
        if isinstance(value, dict):
            return value
    return None


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _canonical(value: Any) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True, default=repr)


def _fences(text: str) -> Iterator[str]:
    """The fenced blocks in the order MuDABench looks: ```json blocks first, then any."""
    for pattern in (_JSON_FENCE, _ANY_FENCE):
        for match in pattern.finditer(text):
            yield match.group(1).strip()


def _spans(text: str) -> Iterator[str]:
    """Each balanced `{...}` from the first `{` on, the next one looked for after the end of the last (braces
    inside strings counted too, as MuDABench's); none after a `{` that is never balanced."""
    start = text.find("{")
    while start >= 0:
        depth = 0
        for index in range(start, len(text)):
            if text[index] == "{":
                depth += 1
            elif text[index] == "}":
                depth -= 1
                if depth == 0:
                    yield text[start : index + 1]
                    start = text.find("{", index + 1)
                    break
        else:
            return


def _repaired(text: str) -> str:
    for pattern, replacement in _REPAIRS:
        text = pattern.sub(replacement, text)
    return text


def name_list(value: Any) -> list[str]:
    """A list of names as MuDABench reads `correct_metric_fields` (`normalize_row_judgment._to_str_list`): a
    list's items as text, a string holding a JSON list, or a string split at commas, semicolons and newlines."""
    if isinstance(value, list):
        return [str(item).strip() for item in value if str(item).strip()]
    if isinstance(value, str):
        parsed = json_or_none(value)
        if isinstance(parsed, list):
            return [str(item).strip() for item in parsed if str(item).strip()]
        return [part.strip() for part in re.split(r"[,;\n]+", value) if part.strip()]
    return []
