"""The conversation's messages, typed: OpenAI's chat format as the models send it and the trajectories log it.

They are `TypedDict`s, so a message is the same dict at run time (sent and logged byte for byte as before) and
typed where it is built and read. What a provider sends that is its own (signed thinking blocks, replay items) is
`ProviderOpaque`: kept, and sent back, as given.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import PlainSerializer, PlainValidator
from typing_extensions import Required, TypedDict

ProviderOpaque = dict[str, Any]
"""A provider's own state (its fields as it sent them): never read here, only sent back."""


class TextPart(TypedDict):
    type: Literal["text"]
    text: str


class ImageUrl(TypedDict):
    url: str
    """A `data:` URL: the image's bytes, base64."""


class ImageUrlPart(TypedDict):
    """An image as a request sends it."""

    type: Literal["image_url"]
    image_url: ImageUrl


class ImageRefPart(TypedDict):
    """An image as a trajectory logs it: its reference (`ImageRef`'s fields), the bytes in the run folder."""

    type: Literal["image"]
    image: dict[str, str | int]


ContentPart = TextPart | ImageUrlPart | ImageRefPart
Content = str | list[ContentPart]


class FunctionCall(TypedDict):
    name: str
    arguments: str
    """JSON text, as the model wrote it."""


class ToolCallEntry(TypedDict):
    """A tool call as an assistant message carries it back."""

    id: str
    type: Literal["function"]
    function: FunctionCall


class ShownRef(TypedDict):
    """The event whose text a logged message's content repeats (records/compact.py)."""

    event: str
    turn: int


class Message(TypedDict, total=False):
    """One message of the conversation. `system` and `user` messages have `content`; an `assistant` one its
    text as `content`, its `reasoning_content` and `tool_calls` (and the provider's own fields, opaque); a `tool`
    one answers `tool_call_id`. A logged message whose content repeats the text just shown has `content_from`
    in its place."""

    role: Required[Literal["system", "user", "assistant", "tool"]]
    content: Content
    tool_call_id: str
    tool_calls: list[ToolCallEntry]
    reasoning_content: str
    content_from: ShownRef


def _as_logged(value: Any) -> Any:
    """Messages read back exactly as they were written: their key order, and any field a provider or another
    harness put in them (a TypedDict's validation would reorder and drop those), checked to be a list of JSON
    objects as before they were typed."""
    if not isinstance(value, list) or not all(isinstance(message, dict) for message in value):
        raise ValueError("a list of messages, each a JSON object")
    return value


LoggedMessages = Annotated[list[Message], PlainValidator(_as_logged), PlainSerializer(_as_logged)]
"""The messages an event logs (`model_call`, `model_error`): typed, written and read back byte for byte."""
