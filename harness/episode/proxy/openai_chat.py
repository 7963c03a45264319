"""OpenAI's chat completions API (https://platform.openai.com/docs/api-reference/chat), as the proxy speaks it:
the request's messages read as untrusted input, a reply written as a chat completion (pure functions)."""

from __future__ import annotations

import time
from typing import Any, cast

from harness.core.messages import Message
from harness.episode.proxy.request import ChatRequest, RequestRefused, Wire, server_sent_event, text_of
from harness.models.base import ModelReply

_ROLES = ("system", "user", "assistant", "tool")
_MESSAGE_FIELDS = ("role", "content", "tool_calls", "tool_call_id", "name")
"""What the run's model is sent of each message; what else an agent adds (its bookkeeping, a provider's fields)
stays with the agent."""


def read_request(request: dict[str, Any]) -> ChatRequest:
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestRefused(400, "field 'messages': a non-empty list of messages")
    return ChatRequest([_message(item, index) for index, item in enumerate(messages)], _tool_names(request))


def _message(item: object, index: int) -> Message:
    where = f"field 'messages[{index}]'"
    if not isinstance(item, dict) or item.get("role") not in _ROLES:
        raise RequestRefused(400, f"{where}: a message with a role of {', '.join(_ROLES)}")
    message = {key: item[key] for key in _MESSAGE_FIELDS if item.get(key) is not None}
    message["content"] = text_of(item.get("content"), f"{where}.content")
    calls = message.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list):
            raise RequestRefused(400, f"{where}.tool_calls: a list of tool calls")
        message["tool_calls"] = [_tool_call(call, f"{where}.tool_calls[{n}]") for n, call in enumerate(calls)]
    return cast(Message, message)


def _tool_call(call: object, where: str) -> dict[str, Any]:
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(call, dict) or not isinstance(function, dict):
        raise RequestRefused(400, f"{where}: a tool call with a function")
    name, arguments, call_id = function.get("name"), function.get("arguments"), call.get("id")
    if not all(isinstance(value, str) for value in (name, arguments, call_id)):
        raise RequestRefused(400, f"{where}: 'id', 'function.name' and 'function.arguments' must be strings")
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _tool_names(request: dict[str, Any]) -> tuple[str, ...]:
    tools = request.get("tools") or []
    names = []
    for index, tool in enumerate(tools if isinstance(tools, list) else [None]):
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise RequestRefused(400, f"field 'tools[{index}]': a function tool with a name")
        names.append(function["name"])
    return tuple(names)


def reply_body(reply: ModelReply, turn: int, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
            for call in reply.tool_calls
        ]
    usage = reply.usage
    return {
        "id": f"chatcmpl-harness-{turn}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": reply.finish_reason or _finish(reply)},
        ],
        "usage": {
            "prompt_tokens": usage.input_tokens,
            "completion_tokens": usage.output_tokens,
            "total_tokens": usage.input_tokens + usage.output_tokens,
        },
    }


def _finish(reply: ModelReply) -> str:
    return "tool_calls" if reply.tool_calls else "stop"


def error_body(status: int, reason: str) -> dict[str, Any]:
    """OpenAI's error object (https://platform.openai.com/docs/guides/error-codes)."""
    kind = {403: "permission_error", 404: "not_found_error"}.get(status, "invalid_request_error")
    return {"error": {"message": reason, "type": kind, "code": status}}


def stream_body(reply: ModelReply, turn: int, model: str) -> str:
    """The reply as chat completion chunks (https://platform.openai.com/docs/api-reference/chat-streaming): the
    message in one delta, then its finish reason and usage, then `[DONE]`."""
    whole = reply_body(reply, turn, model)
    [choice] = whole["choices"]
    delta = dict(choice["message"])
    if "tool_calls" in delta:
        delta["tool_calls"] = [call | {"index": index} for index, call in enumerate(delta["tool_calls"])]
    chunk = {key: whole[key] for key in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    message = chunk | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    end = chunk | {
        "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}],
        "usage": whole["usage"],
    }
    return server_sent_event(message) + server_sent_event(end) + server_sent_event("[DONE]")


WIRE = Wire("openai-chat", read_request, reply_body, error_body, stream_body)
