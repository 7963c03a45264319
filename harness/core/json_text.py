"""JSON text of anything a provider or an agent can produce, lone surrogates included.

`json.loads` of a provider's reply can yield a lone surrogate (`"\\ud800"`), which no UTF-8 file or socket
takes: `json.dumps(..., ensure_ascii=False)` leaves it raw and the write fails. Here each one is escaped as
JSON writes it with `ensure_ascii=True`, so what was sent is recorded as sent and reads back the same, while
every other character stays as it is (a document in Greek stays readable).
"""

from __future__ import annotations

import json
import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def json_text(value: Any, **options: Any) -> str:
    """`json.dumps(value, ensure_ascii=False, **options)`, its lone surrogates escaped (`\\ud800`)."""
    text = json.dumps(value, ensure_ascii=False, **options)
    return _SURROGATE.sub(_escaped, text)


def sendable(value: Any) -> Any:
    """VALUE (strings, lists, dicts of them) with each lone surrogate replaced by U+FFFD, for a wire that
    encodes UTF-8 as is (an HTTP client's JSON body): the conversation goes back to the provider, and its log
    keeps what was sent to us."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [sendable(item) for item in value]
    if isinstance(value, dict):
        return {key: sendable(item) for key, item in value.items()}
    return value


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"
