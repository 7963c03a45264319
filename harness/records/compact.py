"""Each output stored once in a trajectory (schema 3), and read back as if stored in full.

The model is shown an observation as one rendered `text`; the command's `stdout` and `stderr` are inside it
and the next model call sends that same text as its new message. Written in full, each output would be in
the log three times. So a log keeps the `text` only:

- an observation whose stdout (or stderr) occurs in its text stores where: `"stdout_at": [start, end]`;
- a message a model call sends whose content is the text of the observation (or format error) just before
  it stores `"content_from": {"event": kind, "turn": turn}` instead of the content.

`expand` gives every event back in full, so every reader sees the same events for schema 2 and 3 logs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, cast

from harness.core.messages import Message, ShownRef
from harness.records.image_store import logged_part

_STREAMS = ("stdout", "stderr")


@dataclass(frozen=True)
class ShownText:
    """The text of the observation or format error the next model call sends, and which event holds it."""

    event: str
    turn: int
    text: str

    def reference(self) -> ShownRef:
        return {"event": self.event, "turn": self.turn}


def compact_observation(fields: dict[str, Any]) -> dict[str, Any]:
    """An observation's fields with each stream found in the text replaced by its place there."""
    text = fields.get("text") or ""
    compacted: dict[str, Any] = {}
    for name, value in fields.items():
        start = text.find(value) if name in _STREAMS and value else -1
        if start >= 0:
            compacted[f"{name}_at"] = [start, start + len(value)]
        else:
            compacted[name] = value
    return compacted


def compact_messages(messages: list[Message], shown: ShownText | None) -> list[Message]:
    """The messages a call adds, those that repeat the text just shown referring to it instead, and each image
    a reference to the run folder's copy (records/image_store.py), never its bytes."""
    messages = [_images_referred(message) for message in messages]
    if shown is None:
        return messages
    return [_referring(message, shown) if message.get("content") == shown.text else message for message in messages]


def _images_referred(message: Message) -> Message:
    content = message.get("content")
    if not isinstance(content, list):
        return message
    return {**message, "content": [logged_part(part) for part in content]}


def _referring(message: Message, shown: ShownText) -> Message:
    """The message with `content_from` where its `content` stood (key order kept)."""
    referring = {
        ("content_from" if key == "content" else key): (shown.reference() if key == "content" else value)
        for key, value in message.items()
    }
    return cast(Message, referring)


def expand(events: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Every event in full: streams put back from their text, messages' content from the event they name."""
    texts: dict[tuple[str, int], str] = {}
    for event in events:
        kind = event.get("event")
        if kind in ("observation", "format_error", "image_view") and isinstance(event.get("text"), str):
            texts[(kind, event.get("turn", 0))] = event["text"]
            if kind == "observation":
                event = _streams_restored(event)
        elif kind in ("model_call", "model_error") and isinstance(event.get("messages"), list):
            event = {**event, "messages": [_content_restored(message, texts) for message in event["messages"]]}
        yield event


def _streams_restored(event: dict[str, Any]) -> dict[str, Any]:
    if not any(f"{name}_at" in event for name in _STREAMS):
        return event
    restored: dict[str, Any] = {}
    for key, value in event.items():
        name = key.removesuffix("_at")
        if name in _STREAMS and key != name:
            start, end = value
            restored[name] = event["text"][start:end]
        else:
            restored[key] = value
    return restored


def _content_restored(message: dict[str, Any], texts: dict[tuple[str, int], str]) -> dict[str, Any]:
    source = message.get("content_from")
    if not isinstance(source, dict):
        return message
    content = texts.get((source.get("event", ""), source.get("turn", 0)))
    if content is None:
        raise ValueError(f"a message refers to a {source.get('event')} of turn {source.get('turn')} the log lacks")
    return {
        ("content" if key == "content_from" else key): (content if key == "content_from" else value)
        for key, value in message.items()
    }
