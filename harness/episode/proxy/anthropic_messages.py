"""Anthropic's Messages API (https://docs.anthropic.com/en/api/messages), as the proxy speaks it: the request's
system prompt and content blocks read as untrusted input into the run model's conversation (OpenAI's chat
messages: a `tool_use` block is a tool call, a `tool_result` block a tool message, a message of the `system` role
that Claude Code puts in the conversation a system message in its place), and a reply written as a message of
`text` and `tool_use` blocks (pure functions). What else a request says (thinking, effort, `cache_control`, context
management, betas) is the agent's wish for its decoding, not followed: the run's settings are the run's."""

from __future__ import annotations

import json
from typing import Any, cast

from harness.core.messages import Message, ToolCallEntry
from harness.core.untrusted_json import json_or_none
from harness.episode.proxy.request import ChatRequest, RequestRefused, Wire, server_sent_event, text_of
from harness.models.base import ModelReply

_SKIPPED_BLOCKS = ("thinking", "redacted_thinking")
"""The agent's copy of a reasoning block: the run's model is sent its reasoning by the runner, never the agent."""


def read_request(request: dict[str, Any]) -> ChatRequest:
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestRefused(400, "field 'messages': a non-empty list of messages")
    conversation: list[Message] = []
    system = text_of(request.get("system"), "field 'system'")
    if system:
        conversation.append({"role": "system", "content": system})
    for index, item in enumerate(messages):
        conversation += _messages(item, f"field 'messages[{index}]'")
    return ChatRequest(conversation, _tool_names(request))


def _messages(item: object, where: str) -> list[Message]:
    if not isinstance(item, dict) or item.get("role") not in ("user", "assistant", "system"):
        raise RequestRefused(400, f"{where}: a message with a role of user, assistant or system")
    content = item.get("content")
    if item["role"] == "system":
        return [{"role": "system", "content": text_of(content, f"{where}.content") or ""}]
    if isinstance(content, str):
        return [cast(Message, {"role": item["role"], "content": content})]
    if not isinstance(content, list):
        raise RequestRefused(400, f"{where}.content: text, or a list of content blocks")
    blocks = [block for block in content if not (isinstance(block, dict) and block.get("type") in _SKIPPED_BLOCKS)]
    if item["role"] == "assistant":
        return [_assistant(blocks, where)]
    return _user(blocks, where)


def _assistant(blocks: list[Any], where: str) -> Message:
    text: list[str] = []
    calls: list[ToolCallEntry] = []
    for number, block in enumerate(blocks):
        at = f"{where}.content[{number}]"
        if isinstance(block, dict) and block.get("type") == "tool_use":
            if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str):
                raise RequestRefused(400, f"{at}: a tool_use block with an 'id' and a 'name'")
            arguments = json.dumps(block.get("input", {}), ensure_ascii=False)
            calls.append(
                {"id": block["id"], "type": "function", "function": {"name": block["name"], "arguments": arguments}}
            )
        else:
            text.append(text_of([block], at) or "")
    message: Message = {"role": "assistant", "content": "".join(text)}
    if calls:
        message["tool_calls"] = calls
    return message


def _user(blocks: list[Any], where: str) -> list[Message]:
    """Tool results first (each a tool message, as OpenAI's API orders them), then the user's text, if any."""
    results: list[Message] = []
    text: list[str] = []
    for number, block in enumerate(blocks):
        at = f"{where}.content[{number}]"
        if isinstance(block, dict) and block.get("type") == "tool_result":
            if not isinstance(block.get("tool_use_id"), str):
                raise RequestRefused(400, f"{at}: a tool_result block with a 'tool_use_id'")
            output = text_of(block.get("content"), f"{at}.content") or ""
            results.append({"role": "tool", "tool_call_id": block["tool_use_id"], "content": output})
        else:
            text.append(text_of([block], at) or "")
    return results + ([{"role": "user", "content": "".join(text)}] if text else [])


def _tool_names(request: dict[str, Any]) -> tuple[str, ...]:
    tools = request.get("tools") or []
    names = []
    for index, tool in enumerate(tools if isinstance(tools, list) else [None]):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise RequestRefused(400, f"field 'tools[{index}]': a tool with a name")
        names.append(tool["name"])
    return tuple(names)


def reply_body(reply: ModelReply, turn: int, model: str) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text else []
    for call in reply.tool_calls:
        arguments = json_or_none(call.arguments)
        # arguments that are no JSON object cannot be a tool_use's input: the agent sees them as the model wrote them
        given = arguments if isinstance(arguments, dict) else {"arguments": call.arguments}
        content.append({"type": "tool_use", "id": call.id, "name": call.name, "input": given})
    return {
        "id": f"msg_harness_{turn}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": _stop_reason(reply),
        "stop_sequence": None,
        "usage": {"input_tokens": reply.usage.input_tokens, "output_tokens": reply.usage.output_tokens},
    }


def _stop_reason(reply: ModelReply) -> str:
    if reply.tool_calls:
        return "tool_use"
    return "max_tokens" if reply.finish_reason == "length" else "end_turn"


def error_body(status: int, reason: str) -> dict[str, Any]:
    """Anthropic's error object (https://docs.anthropic.com/en/api/errors)."""
    kind = {403: "permission_error", 404: "not_found_error", 413: "request_too_large"}.get(status)
    return {"type": "error", "error": {"type": kind or "invalid_request_error", "message": reason}}


def stream_body(reply: ModelReply, turn: int, model: str) -> str:
    """The reply as Messages stream events (https://docs.anthropic.com/en/api/messages-streaming): the message's
    start, each content block whole (a text delta, or a tool call's input as one JSON delta), its stop reason and
    usage, its stop."""
    whole = reply_body(reply, turn, model)
    start = whole | {"content": [], "stop_reason": None, "usage": whole["usage"] | {"output_tokens": 0}}
    events = [server_sent_event({"type": "message_start", "message": start}, "message_start")]
    for index, block in enumerate(whole["content"]):
        if block["type"] == "text":
            opened, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
        else:
            opened = block | {"input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"], ensure_ascii=False)}
        events.append(
            server_sent_event(
                {"type": "content_block_start", "index": index, "content_block": opened}, "content_block_start"
            )
        )
        events.append(
            server_sent_event({"type": "content_block_delta", "index": index, "delta": delta}, "content_block_delta")
        )
        events.append(server_sent_event({"type": "content_block_stop", "index": index}, "content_block_stop"))
    stop = {"stop_reason": whole["stop_reason"], "stop_sequence": None}
    usage = {"output_tokens": whole["usage"]["output_tokens"]}
    events.append(server_sent_event({"type": "message_delta", "delta": stop, "usage": usage}, "message_delta"))
    events.append(server_sent_event({"type": "message_stop"}, "message_stop"))
    return "".join(events)


WIRE = Wire("anthropic-messages", read_request, reply_body, error_body, stream_body)
