"""A judge reply read as leniently as MuDABench reads it (its common/json_utils.py `robust_parse_json` with
`expected_type="dict"`): the reply itself as JSON, else the first fenced block, else the first balanced `{...}`,
each also after repairing Python literals (`True`, `None`, single quotes) and trailing commas, else the text as
a Python literal. Written from its published rules, not copied."""

from __future__ import annotations

import ast
import json
import re
from typing import Any

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


def lenient_object(reply: str) -> dict[str, Any] | None:
    """The JSON object a reply holds, found and repaired as MuDABench does; None when there is none."""
    reply = reply.strip()
    if not reply or len(reply) > MAX_REPLY_CHARS:
        return None
    try:
        whole = json.loads(reply)
    except (json.JSONDecodeError, RecursionError):
        pass
    else:  # a reply that is JSON but no object is not searched further
        return whole if isinstance(whole, dict) else None
    fenced = _fenced(reply)
    braced = _braced(reply)
    for candidate in (fenced, braced):
        if candidate:
            for text in (candidate, _repaired(candidate)):
                found = _loads(text)
                if found is not None:
                    return found
    try:
        value = ast.literal_eval(fenced or braced or reply)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _loads(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _fenced(text: str) -> str | None:
    match = _JSON_FENCE.search(text) or _ANY_FENCE.search(text)
    return match.group(1).strip() if match else None


def _braced(text: str) -> str | None:
    """From the first `{` to the brace that balances it (braces inside strings counted too, as theirs)."""
    start = text.find("{")
    if start < 0:
        return None
    depth = 0
    for index in range(start, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return text[start : index + 1]
    return None


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
        try:
            parsed = json.loads(value)
        except (json.JSONDecodeError, RecursionError):
            parsed = None
        if isinstance(parsed, list):
            return [str(item).strip() for item in parsed if str(item).strip()]
        return [part.strip() for part in re.split(r"[,;\n]+", value) if part.strip()]
    return []
