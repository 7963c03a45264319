"""Google's Gemini API (https://ai.google.dev/api/generate-content), as the proxy speaks it: a request's
`systemInstruction` and `contents` read as untrusted input into the run model's conversation (OpenAI's chat
messages: a `functionCall` part is a tool call, a `functionResponse` part a tool message), and a reply written as a
`GenerateContentResponse` of `text` and `functionCall` parts (pure functions). The method is in the path
(`models/{model}:generateContent`, `:streamGenerateContent`), not in the body."""

from __future__ import annotations

import json
import re
from typing import Any, NoReturn

from harness.core.messages import Message, ToolCallEntry
from harness.core.untrusted_json import json_or_none
from harness.episode.proxy.request import ChatRequest, RequestRefused, Wire, server_sent_event
from harness.models.base import ModelReply

PATH = re.compile(r"/v1(?:beta)?/models/[\w.-]+:(?P<method>generateContent|streamGenerateContent)")
"""The paths served; `streamGenerateContent` answers as an event stream (`alt=sse`, the only form served)."""
_ROLES = {"user": "user", "model": "assistant"}


def read_request(request: dict[str, Any]) -> ChatRequest:
    contents = request.get("contents")
    if not isinstance(contents, list) or not contents:
        raise RequestRefused(400, "field 'contents': a non-empty list of contents")
    conversation: list[Message] = []
    system = request.get("systemInstruction")
    if system is not None:
        text = _text(_parts(system, "field 'systemInstruction'"), "field 'systemInstruction'")
        conversation.append({"role": "system", "content": text})
    pending: list[tuple[str, str]] = []
    """The calls of the last model turn not answered yet (id, name): a response without an id answers the first."""
    for index, content in enumerate(contents):
        where = f"field 'contents[{index}]'"
        parts = _parts(content, where)
        if content.get("role") == "model":
            message, pending = _assistant(parts, where, index)
            conversation.append(message)
        else:
            conversation += _user(parts, where, pending)
    return ChatRequest(conversation, _tool_names(request))


def _parts(content: object, where: str) -> list[dict[str, Any]]:
    role = content.get("role", "user") if isinstance(content, dict) else None
    if not isinstance(content, dict) or not isinstance(role, str) or role not in _ROLES:
        raise RequestRefused(400, f"{where}: a content with a role of user or model")
    parts = content.get("parts")
    if not isinstance(parts, list) or not all(isinstance(part, dict) for part in parts):
        raise RequestRefused(400, f"{where}.parts: a list of parts")
    # the agent's copy of the model's reasoning: the run's model is sent its reasoning by the runner, never the agent
    return [part for part in parts if part.get("thought") is not True]


def _text(parts: list[dict[str, Any]], where: str) -> str:
    for number, part in enumerate(parts):
        if not isinstance(part.get("text"), str):
            raise RequestRefused(400, f"{where}.parts[{number}]: a text part")
    return "".join(part["text"] for part in parts)


def _assistant(parts: list[dict[str, Any]], where: str, index: int) -> tuple[Message, list[tuple[str, str]]]:
    text: list[str] = []
    calls: list[ToolCallEntry] = []
    for number, part in enumerate(parts):
        at = f"{where}.parts[{number}]"
        call = part.get("functionCall")
        if call is None:
            text.append(_text([part], where) if "text" in part else _refused(at))
            continue
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise RequestRefused(400, f"{at}.functionCall: a call with a 'name'")
        given = call.get("id")
        call_id = given if isinstance(given, str) else f"call_{index}_{number}"
        arguments = json.dumps(call.get("args") or {}, ensure_ascii=False)
        calls.append({"id": call_id, "type": "function", "function": {"name": call["name"], "arguments": arguments}})
    message: Message = {"role": "assistant", "content": "".join(text)}
    if calls:
        message["tool_calls"] = calls
    return message, [(call["id"], call["function"]["name"]) for call in calls]


def _user(parts: list[dict[str, Any]], where: str, pending: list[tuple[str, str]]) -> list[Message]:
    """Function responses first (each a tool message, as OpenAI's API orders them), then the user's text, if any."""
    results: list[Message] = []
    text: list[str] = []
    for number, part in enumerate(parts):
        at = f"{where}.parts[{number}]"
        response = part.get("functionResponse")
        if response is None:
            text.append(_text([part], where) if "text" in part else _refused(at))
            continue
        if not isinstance(response, dict) or not isinstance(response.get("name"), str):
            raise RequestRefused(400, f"{at}.functionResponse: a response with a 'name'")
        given = response.get("id")
        call_id = given if isinstance(given, str) else _answered(pending, response["name"])
        pending[:] = [(given, name) for given, name in pending if given != call_id]
        results.append({"role": "tool", "tool_call_id": call_id, "content": _output(response.get("response"))})
    return results + ([{"role": "user", "content": "".join(text)}] if text else [])


def _answered(pending: list[tuple[str, str]], name: str) -> str:
    return next((given for given, called in pending if called == name), f"call_{name}")


def _output(response: object) -> str:
    """A function's response as the model is shown it: its `output` text (Gemini CLI's form), else its JSON."""
    if isinstance(response, dict) and set(response) == {"output"} and isinstance(response["output"], str):
        return response["output"]
    return json.dumps(response, ensure_ascii=False)


def _refused(where: str) -> NoReturn:
    raise RequestRefused(400, f"{where}: a text, functionCall or functionResponse part (images are not forwarded)")


def _tool_names(request: dict[str, Any]) -> tuple[str, ...]:
    tools = request.get("tools") or []
    names = []
    for index, tool in enumerate(tools if isinstance(tools, list) else [None]):
        declarations = tool.get("functionDeclarations") if isinstance(tool, dict) else None
        if not isinstance(declarations, list):
            raise RequestRefused(400, f"field 'tools[{index}]': a tool of functionDeclarations")
        for number, declaration in enumerate(declarations):
            if not isinstance(declaration, dict) or not isinstance(declaration.get("name"), str):
                raise RequestRefused(400, f"field 'tools[{index}].functionDeclarations[{number}]': a named function")
            names.append(declaration["name"])
    return tuple(names)


def reply_body(reply: ModelReply, turn: int, model: str) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"text": reply.text}] if reply.text else []
    for call in reply.tool_calls:
        arguments = json_or_none(call.arguments)
        # arguments that are no JSON object cannot be a functionCall's args: the agent sees them as the model wrote them
        given = arguments if isinstance(arguments, dict) else {"arguments": call.arguments}
        parts.append({"functionCall": {"id": call.id, "name": call.name, "args": given}})
    usage = reply.usage
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": parts},
                "finishReason": "MAX_TOKENS" if reply.finish_reason == "length" else "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": usage.input_tokens,
            "candidatesTokenCount": usage.output_tokens,
            "totalTokenCount": usage.input_tokens + usage.output_tokens,
        },
        "modelVersion": model,
        "responseId": f"harness-{turn}",
    }


def error_body(status: int, reason: str) -> dict[str, Any]:
    """Google's error object (https://ai.google.dev/gemini-api/docs/troubleshooting)."""
    kind = {403: "PERMISSION_DENIED", 404: "NOT_FOUND", 413: "INVALID_ARGUMENT"}.get(status, "INVALID_ARGUMENT")
    return {"error": {"code": status, "message": reason, "status": kind}}


def stream_body(reply: ModelReply, turn: int, model: str) -> str:
    """The reply as `streamGenerateContent?alt=sse` sends it: one event holding the whole response."""
    return server_sent_event(reply_body(reply, turn, model))


WIRE = Wire("gemini-generate-content", read_request, reply_body, error_body, stream_body)
