"""A reply whose tool-call arguments cannot be parsed stays a reply (the agent's format error), not a provider
failure.

While it converts a chat completion, litellm parses every tool call's arguments (its repair of OpenAI's
`multi_tool_use.parallel` pseudo-call) and returns them unchanged when they are not JSON; but arguments nested
about a thousand deep raise RecursionError, and an integer of over 4,300 digits a plain ValueError (Python's
integer-string limit, issue 45), which it does not expect: the whole reply became "Invalid response object", a
500 that was retried and ended the episode as `model_error`. Here those errors too leave the calls unchanged,
for the agent loop to refuse as a malformed call the agent spent a turn on (harness/core/untrusted_json.py).
"""

from __future__ import annotations

import functools
from typing import Any

from litellm.litellm_core_utils.llm_response_utils import convert_dict_to_response


def keep_unparsable_tool_calls() -> None:
    """Install the wrapper once (litellm calls the function by its module-level name)."""
    original = convert_dict_to_response.handle_invalid_parallel_tool_calls
    if getattr(original, "keeps_unparsable_calls", False):
        return

    @functools.wraps(original)
    def tolerant(tool_calls: Any) -> Any:
        try:
            return original(tool_calls)
        except (ValueError, RecursionError, MemoryError):  # raised before any call was replaced: as sent
            return tool_calls

    tolerant.keeps_unparsable_calls = True  # type: ignore[attr-defined]
    convert_dict_to_response.handle_invalid_parallel_tool_calls = tolerant
