"""Anthropic's Messages API (`POST /v1/messages`) on loopback, applying the rules Anthropic documents:

- https://docs.claude.com/en/api/messages: `max_tokens` is required; every message but an optional final
  assistant one has non-empty content.
- https://docs.claude.com/en/docs/build-with-claude/extended-thinking: `thinking.budget_tokens` is at least 1024
  and below `max_tokens`; with thinking, `temperature` may only be 1; the thinking blocks of the assistant turn
  that made the last tool calls go back unchanged, first in that turn, signature included ("Preserving thinking
  blocks"); a thinking block whose signature does not match its text, or a `redacted_thinking` block whose
  `data` was changed, is refused ("Thinking redaction").
- https://docs.claude.com/en/docs/agents-and-tools/tool-use/implement-tool-use: each `tool_use` is answered by a
  `tool_result` in the very next message, and each `tool_result` answers a `tool_use` of the message before.
- https://docs.claude.com/en/api/errors: the error body (`{"type": "error", "error": {"type", "message"}}`),
  `rate_limit_error` with `retry-after`, `api_error`.
"""

from __future__ import annotations

import json
import time
from typing import Any

from tests.helpers.providers.image_rules import ANTHROPIC_RULES, anthropic_images, check_images
from tests.helpers.providers.loopback import Fault, LoopbackProvider, ProviderRuleBroken, Turn, sign, tool_call_of

THINKING_FIRST = (
    "messages.{index}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{found}`. When "
    "`thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost "
    "set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To "
    "avoid this requirement, disable `thinking`. Please consult our documentation at "
    "https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
)
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
REDACTED_EVERY = 10
"""Every tenth reply with thinking also holds a `redacted_thinking` block (encrypted, passed back unmodified)."""
CONTEXT_OVERFLOW = "prompt is too long: 215000 tokens > 200000 maximum"


class AnthropicMessages(LoopbackProvider):
    path_suffix = "/v1/messages"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._tool_ids = 0

    def model_turns(self, body: dict[str, Any]) -> int:
        return sum(1 for message in body.get("messages", []) if message.get("role") == "assistant")

    def check(self, body: dict[str, Any]) -> None:
        if "max_tokens" not in body:
            raise ProviderRuleBroken("max_tokens: Field required")
        thinking = body.get("thinking") or {}
        if thinking.get("type") == "enabled":
            budget = int(thinking.get("budget_tokens", 0))
            if budget < 1024:
                raise ProviderRuleBroken(
                    "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
                )
            if int(body["max_tokens"]) <= budget:
                raise ProviderRuleBroken(
                    "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at "
                    "https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size"
                )
            if body.get("temperature", 1) != 1:
                raise ProviderRuleBroken(
                    "`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at "
                    "https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility"
                )
        messages = [_blocks(message) for message in body.get("messages", [])]
        for index, (role, blocks) in enumerate(messages):
            last = index == len(messages) - 1
            if not blocks and not (last and role == "assistant"):
                raise ProviderRuleBroken(
                    f"messages.{index}: all messages must have non-empty content except for the optional final "
                    "assistant message"
                )
            self._check_signatures(index, blocks)
            self._check_tool_pairs(index, messages)
        if thinking.get("type") == "enabled":
            self._check_thinking_leads(messages)
        self.last_images = anthropic_images(body)
        check_images(self.last_images, ANTHROPIC_RULES, "anthropic")

    def _check_signatures(self, index: int, blocks: list[dict[str, Any]]) -> None:
        """Thinking blocks come back as they were given: the text its signature signs, a redaction's data."""
        for position, block in enumerate(blocks):
            kind = block.get("type")
            if kind == "thinking" and block.get("signature") != sign(self.secret, block.get("thinking", "")):
                where = f"messages.{index}.content.{position}"
                raise ProviderRuleBroken(f"{where}: Invalid `signature` in `thinking` block")
            if kind == "redacted_thinking" and block.get("data") != sign(self.secret, "redacted"):
                where = f"messages.{index}.content.{position}"
                raise ProviderRuleBroken(f"{where}: Invalid `data` in `redacted_thinking` block")

    def _check_tool_pairs(self, index: int, messages: list[tuple[str, list[dict[str, Any]]]]) -> None:
        role, blocks = messages[index]
        if role == "assistant":
            asked = [block["id"] for block in blocks if block.get("type") == "tool_use"]
            answered = set()
            if index + 1 < len(messages) and messages[index + 1][0] == "user":
                answered = {b.get("tool_use_id") for b in messages[index + 1][1] if b.get("type") == "tool_result"}
            missing = [call for call in asked if call not in answered]
            if missing:
                raise ProviderRuleBroken(
                    f"messages.{index}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                    f"{', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` block in the "
                    "next message."
                )
            return
        before = messages[index - 1] if index > 0 else ("user", [])
        asked_before = {block.get("id") for block in before[1] if block.get("type") == "tool_use"}
        for position, block in enumerate(blocks):
            if block.get("type") == "tool_result" and block.get("tool_use_id") not in asked_before:
                raise ProviderRuleBroken(
                    f"messages.{index}.content.{position}: unexpected `tool_use_id` found in `tool_result` blocks: "
                    f"{block.get('tool_use_id')}. Each `tool_result` block must have a corresponding `tool_use` block "
                    "in the previous message."
                )

    @staticmethod
    def _check_thinking_leads(messages: list[tuple[str, list[dict[str, Any]]]]) -> None:
        """The assistant turn that made the lastmost tool calls, when the request continues it with their results."""
        if not messages or messages[-1][0] != "user":
            return
        if not any(block.get("type") == "tool_result" for block in messages[-1][1]):
            return
        index = len(messages) - 2
        role, blocks = messages[index]
        first = blocks[0].get("type") if blocks else "text"
        if role == "assistant" and first not in ("thinking", "redacted_thinking"):
            raise ProviderRuleBroken(THINKING_FIRST.format(index=index, found=first))

    def answer(self, body: dict[str, Any], turn: Turn, path: str) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        thinking_on = (body.get("thinking") or {}).get("type") == "enabled"
        if turn.finish != "safety":
            if thinking_on:
                content.append(
                    {"type": "thinking", "thinking": turn.thinking, "signature": sign(self.secret, turn.thinking)}
                )
            if thinking_on and self.model_turns(body) % REDACTED_EVERY == REDACTED_EVERY - 1:
                content.append({"type": "redacted_thinking", "data": sign(self.secret, "redacted")})
            if turn.text:
                content.append({"type": "text", "text": turn.text})
            for number, command in enumerate(turn.commands):
                self._tool_ids += 1
                arguments = turn.arguments if number == 0 and turn.arguments is not None else None
                name, tool_input = tool_call_of(command)
                if arguments is not None:
                    tool_input = json.loads(arguments)
                content.append(
                    {"type": "tool_use", "id": f"toolu_{self._tool_ids:04d}", "name": name, "input": tool_input}
                )
        stop = {"length": "max_tokens", "safety": "refusal"}.get(turn.finish) or (
            "tool_use" if turn.commands else "end_turn"
        )
        return {
            "id": f"msg_{time.monotonic_ns()}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", ""),
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 120, "output_tokens": 30},
        }

    def error_body(self, fault: Fault) -> dict[str, Any]:
        kind = ERROR_TYPES.get(fault.status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": fault.message}, "request_id": "req_loopback"}


def _blocks(message: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    content = message.get("content")
    if isinstance(content, str):
        return message.get("role", ""), ([{"type": "text", "text": content}] if content else [])
    return message.get("role", ""), list(content or [])
