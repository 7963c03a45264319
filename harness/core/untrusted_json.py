"""JSON that a model or a judge wrote, read within bounds.

`json.loads` of such text can fail in more ways than `JSONDecodeError`: nesting a thousand deep raises
RecursionError, an integer of more than 4,300 digits a plain ValueError (Python's integer-string limit),
and a long enough text MemoryError. Each is the writer's malformed output (the agent's format error, the
judge's unreadable reply), never ours: here every one is an `UnreadableJson` saying which it was.
"""

from __future__ import annotations

import json
import sys
from typing import Any

MAX_JSON_CHARS = 1_000_000
"""A longer text is not parsed (no tool call or verdict needs that much; it bounds the parse)."""


class UnreadableJson(ValueError):
    """The text is not JSON that can be read within the bounds; the message says why, as the end of a sentence
    "the tool arguments are ..."."""


def read_json(text: str, max_chars: int = MAX_JSON_CHARS) -> Any:
    """The JSON value TEXT holds; `UnreadableJson` for text that is none, or none that can be read in bounds."""
    if len(text) > max_chars:
        raise UnreadableJson(f"too long to read ({len(text):,} characters, over the limit of {max_chars:,})")
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise UnreadableJson("not valid JSON") from None
    except RecursionError:
        raise UnreadableJson("nested too deeply to read") from None
    except MemoryError:
        raise UnreadableJson("too large to read") from None
    except ValueError:  # the integer-string limit: the one other ValueError json.loads raises
        raise UnreadableJson(f"not readable: a number has over {sys.get_int_max_str_digits():,} digits") from None


def json_or_none(text: str, max_chars: int = MAX_JSON_CHARS) -> Any:
    """`read_json`, or None for text it cannot read (for a reader that treats every failure alike)."""
    try:
        return read_json(text, max_chars)
    except UnreadableJson:
        return None
