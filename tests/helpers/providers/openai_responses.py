"""OpenAI's Responses API (`POST /v1/responses`), where litellm sends a reasoning model that gets tools (the
`gpt-5.5` alias), on loopback, applying the rules OpenAI documents (tests/helpers/openai_server.py serves chat
completions and an unchecked Responses mode for the other tests):

- https://platform.openai.com/docs/guides/function-calling: every `function_call_output` answers a
  `function_call` of the input by `call_id`, and every function call is answered.
- https://platform.openai.com/docs/guides/reasoning: reasoning items go back with the function calls they came
  with ("Keeping reasoning items in context"); with `store: false` only an item sent with its
  `encrypted_content` (given when `include` asks for `reasoning.encrypted_content`) can be; a reasoning item is
  followed by the item that followed it in the output. Items of a reply that made calls but were not sent back
  are counted in `degraded` (OpenAI accepts it, at a cost to the model's reasoning).
- https://platform.openai.com/docs/api-reference/responses/create: reasoning models take only the default
  temperature (1); the response object (`output`, `status`, `incomplete_details`, `usage`).
- https://platform.openai.com/docs/guides/error-codes: the error body (`{"error": {"message", "type", "param",
  "code"}}`), 429 with `retry-after` and `x-ratelimit-*` headers.
"""

from __future__ import annotations

import json
import secrets
import threading
from dataclasses import dataclass
from typing import Any

from tests.helpers.providers.image_rules import OPENAI_RULES, check_images, openai_responses_images
from tests.helpers.providers.loopback import Fault, LoopbackProvider, ProviderRuleBroken, Turn, tool_call_of

MODEL_ITEMS = ("reasoning", "function_call")
CONTEXT_OVERFLOW = "Your input exceeds the context window of this model. Please adjust your input and try again."


@dataclass(frozen=True)
class _IssuedReasoning:
    encrypted_content: str
    follower: str
    """The call_id of the function call right after the item in the output ("" when a message came next)."""
    calls: tuple[str, ...]
    """The call_ids of the reply's function calls."""


def _is_model_item(item: dict[str, Any]) -> bool:
    return item.get("type") in MODEL_ITEMS or (
        item.get("type", "message") == "message" and item.get("role") == "assistant"
    )


class OpenAIResponses(LoopbackProvider):
    path_suffix = "/responses"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._reasoning: dict[str, _IssuedReasoning] = {}
        self._items_lock = threading.Lock()

    def model_turns(self, body: dict[str, Any]) -> int:
        items, turns, inside = body.get("input") or [], 0, False
        for item in items if isinstance(items, list) else []:
            if _is_model_item(item) and not inside:
                turns += 1
            inside = _is_model_item(item)
        return turns

    def check(self, body: dict[str, Any]) -> None:
        if body.get("reasoning") and body.get("temperature", 1) != 1:
            raise ProviderRuleBroken(
                f"Unsupported value: 'temperature' does not support {body['temperature']} with this model. Only the "
                "default (1) value is supported."
            )
        items = body.get("input") if isinstance(body.get("input"), list) else []
        calls = [item.get("call_id") for item in items if item.get("type") == "function_call"]
        outputs = [item.get("call_id") for item in items if item.get("type") == "function_call_output"]
        for call_id in outputs:
            if call_id not in calls:
                raise ProviderRuleBroken(f"No tool call found for function call output with call_id {call_id}.")
        for call_id in calls:
            if call_id not in outputs:
                raise ProviderRuleBroken(f"No tool output found for function call {call_id}.")
        stored = body.get("store", True) is not False
        for position, item in enumerate(items):
            if item.get("type") == "reasoning":
                self._check_reasoning(item, items[position + 1 : position + 2], stored)
        self._count_dropped(items, calls)
        self.last_images = openai_responses_images(body)
        check_images(self.last_images, OPENAI_RULES, "openai")

    def _check_reasoning(self, item: dict[str, Any], following: list[dict[str, Any]], stored: bool) -> None:
        with self._items_lock:
            known = self._reasoning.get(item.get("id", ""))
        if not stored and not item.get("encrypted_content"):
            raise ProviderRuleBroken(
                f"Item with id '{item.get('id')}' not found. Items are not persisted when `store` is set to false. "
                "Try again with `store` set to true, or remove this item from your input."
            )
        if known is None or (item.get("encrypted_content") and item["encrypted_content"] != known.encrypted_content):
            raise ProviderRuleBroken(f"Item with id '{item.get('id')}' not found.")
        if known.follower and not (following and following[0].get("call_id") == known.follower):
            raise ProviderRuleBroken(
                f"Item '{item.get('id')}' of type 'reasoning' was provided without its required following item."
            )

    def _count_dropped(self, items: list[dict[str, Any]], calls: list[str]) -> None:
        sent = {item.get("id") for item in items if item.get("type") == "reasoning"}
        with self._items_lock:
            expected = [rid for rid, issued in self._reasoning.items() if set(issued.calls) & set(calls)]
        self.degraded.extend(f"request {len(self.requests)}: {rid}" for rid in expected if rid not in sent)

    def answer(self, body: dict[str, Any], turn: Turn, path: str) -> dict[str, Any]:
        output: list[dict[str, Any]] = []
        reasoning_id = f"rs_{secrets.token_hex(8)}"
        encrypted = f"gAAAA{secrets.token_urlsafe(24)}"
        include = body.get("include") or []
        summary = [{"type": "summary_text", "text": turn.thinking}]
        reasoning: dict[str, Any] = {"type": "reasoning", "id": reasoning_id, "summary": summary}
        if "reasoning.encrypted_content" in include:
            reasoning["encrypted_content"] = encrypted
        output.append(reasoning)
        if turn.text and turn.finish != "safety":
            content = [{"type": "output_text", "text": turn.text, "annotations": []}]
            output.append(
                {
                    "type": "message",
                    "id": f"msg_{secrets.token_hex(8)}",
                    "role": "assistant",
                    "status": "completed",
                    "content": content,
                }
            )
        for number, command in enumerate(turn.commands):
            call_id = f"call_{secrets.token_urlsafe(12).replace('-', 'x').replace('_', 'y')}"
            name, tool_arguments = tool_call_of(command)
            arguments = turn.arguments if number == 0 and turn.arguments is not None else json.dumps(tool_arguments)
            output.append(
                {
                    "type": "function_call",
                    "id": f"fc_{secrets.token_hex(8)}",
                    "call_id": call_id,
                    "name": name,
                    "arguments": arguments,
                    "status": "completed",
                }
            )
        follower = output[1]["call_id"] if len(output) > 1 and output[1]["type"] == "function_call" else ""
        calls = tuple(item["call_id"] for item in output if item["type"] == "function_call")
        with self._items_lock:
            self._reasoning[reasoning_id] = _IssuedReasoning(encrypted, follower, calls)
        incomplete = {"length": {"reason": "max_output_tokens"}, "safety": {"reason": "content_filter"}}.get(
            turn.finish
        )
        return {
            "id": f"resp_{secrets.token_hex(8)}",
            "object": "response",
            "created_at": 1_700_000_000,
            "status": "incomplete" if incomplete else "completed",
            "incomplete_details": incomplete,
            "model": body.get("model", ""),
            "output": output,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": body.get("tools", []),
            "usage": {
                "input_tokens": 120,
                "output_tokens": 30,
                "total_tokens": 150,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 10},
            },
        }

    def error_body(self, fault: Fault) -> dict[str, Any]:
        kind = {429: "rate_limit_exceeded", 500: "server_error"}.get(fault.status, "invalid_request_error")
        return {"error": {"message": fault.message, "type": kind, "param": None, "code": fault.code}}
