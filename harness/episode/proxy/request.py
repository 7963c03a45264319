"""What the proxy reads of an agent's request, whatever API it speaks: the conversation in the form the run's
model takes (OpenAI's chat messages, models/base.py) and the tools the agent offers; and what each API module
(`Wire`) gives the server."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.core.messages import Message
from harness.core.untrusted_json import UnreadableJson, read_json
from harness.models.base import ModelReply


class RequestRefused(ValueError):
    """A request the proxy answers without a model call: its HTTP status and the agent's one-line reason."""

    def __init__(self, status: int, reason: str):
        super().__init__(reason)
        self.status = status


@dataclass(frozen=True)
class ChatRequest:
    messages: list[Message]
    """The conversation as the run's model takes it (OpenAI chat messages)."""
    tool_names: tuple[str, ...]
    """The tools the agent offers its model, by name."""


@dataclass(frozen=True)
class Wire:
    """One API as the proxy speaks it."""

    name: str
    read_request: Callable[[Any], ChatRequest]
    """The request's JSON (an object) to its conversation; `RequestRefused` (400) naming the first bad field."""
    reply_body: Callable[[ModelReply, int, str], dict[str, Any]]
    """A reply of the run's model (with its turn and the model's name) as this API's response."""
    error_body: Callable[[int, str], dict[str, Any]]
    """A refusal (status, reason) as this API's error object."""
    stream_body: Callable[[ModelReply, int, str], str]
    """The same reply as this API's stream of server-sent events, for a request that asked for one (the whole reply,
    sent at once once the model has answered)."""


def json_object(body: bytes) -> dict[str, Any]:
    """The request body as a JSON object, read within bounds."""
    try:
        request = read_json(body.decode("utf-8"))
    except (UnicodeDecodeError, UnreadableJson) as error:
        raise RequestRefused(400, f"the request body is not JSON: {error}") from None
    if not isinstance(request, dict):
        raise RequestRefused(400, "the request body is not a JSON object")
    if request.get("stream") not in (None, True, False):
        raise RequestRefused(400, "field 'stream': true or false")
    return request


def server_sent_event(data: dict[str, Any] | str, event: str | None = None) -> str:
    """One event of a `text/event-stream` body: its name, when it has one, and its data (JSON, or text as is)."""
    line = data if isinstance(data, str) else json.dumps(data)
    return (f"event: {event}\n" if event else "") + f"data: {line}\n\n"


def text_of(content: object, where: str) -> str | None:
    """Text content: a string, or a list of text parts (joined); images are not forwarded."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list) and all(_is_text_part(part) for part in content):
        return "".join(part["text"] for part in content)
    raise RequestRefused(400, f"{where}: text, or a list of text parts")


def _is_text_part(part: object) -> bool:
    return isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str)
