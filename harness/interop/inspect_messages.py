"""Our trajectory's conversation as inspect_ai chat messages: system and user prompts, each reply as an
assistant message (its reasoning as reasoning content, its bash calls as inspect tool calls) and each
observation as a tool (or, in text format, user) message. Each message carries under the metadata key
`harness` what rebuilds our events exactly: a reply's usage, cost, raw tool calls and commands; an
observation's event."""

from __future__ import annotations

from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    Content,
    ContentImage,
    ContentReasoning,
    ContentText,
)
from inspect_ai.tool import ToolCall, ToolCallError

from harness.core.images import CheckedImage, ImageRef, data_url
from harness.core.messages import Message
from harness.core.untrusted_json import UnreadableJson, read_json
from harness.interop.imported import message_text
from harness.records.conversation import LoggedCall, Output, conversation
from harness.records.events import Event, ImageViewEvent, ModelCallEvent, ObservationEvent
from harness.records.image_store import ImageStore, logged_refs
from harness.records.reading import LoggedEvent

KEY = "harness"


def inspect_conversation(events: list[LoggedEvent], images: ImageStore | None = None) -> list[ChatMessage]:
    """The whole conversation: every call's new messages, each reply, and an output no call was sent (the
    command that printed the answer). Each observation's raw output rides on its message's metadata; each image
    the agent was shown is a ContentImage of its bytes from IMAGES (a run folder's)."""
    logged = conversation(events)
    messages: list[ChatMessage] = []
    for call in logged.calls:
        if isinstance(call.call, ModelCallEvent):
            messages += [_message(message, call.shown, images) for message in call.call.messages]
            messages.append(_assistant(call))
    if isinstance(logged.unsent, ObservationEvent):
        call_id = _last_call_id(messages)
        text = logged.unsent.text
        unsent: Message = (
            {"role": "tool", "tool_call_id": call_id, "content": text} if call_id else {"role": "user", "content": text}
        )
        messages.append(_message(unsent, logged.unsent, images))
    return messages


def _last_call_id(messages: list[ChatMessage]) -> str | None:
    last = messages[-1] if messages else None
    calls = last.tool_calls if isinstance(last, ChatMessageAssistant) else None
    return calls[-1].id if calls else None


def _message(message: Message, observation: Output | None, images: ImageStore | None) -> ChatMessage:
    role, text = message["role"], message_text(message.get("content"))
    if role == "system":
        return ChatMessageSystem(content=text)
    content = _with_images(text, logged_refs(message), images)
    metadata = {KEY: _observation_record(observation)} if observation is not None else None
    if role == "tool":
        timed_out = isinstance(observation, ObservationEvent) and observation.timed_out
        error = ToolCallError(type="timeout", message="the command timed out") if timed_out else None
        function = "view_image" if isinstance(observation, ImageViewEvent) else "bash"
        return ChatMessageTool(
            content=content, tool_call_id=message.get("tool_call_id"), function=function, metadata=metadata, error=error
        )
    if role == "assistant":
        return ChatMessageAssistant(content=text)
    return ChatMessageUser(content=content, metadata=metadata)


def _with_images(text: str, refs: list[ImageRef], images: ImageStore | None) -> str | list[Content]:
    """TEXT alone, or followed by each image as inspect's ContentImage (a data URL, as inspect keeps one); an
    image the run folder lacks stays out (the message's metadata still names it)."""
    if not refs or images is None:
        return text
    parts: list[Content] = [ContentText(text=text)]
    for ref in refs:
        try:
            parts.append(ContentImage(image=data_url(CheckedImage(ref, images.get(ref)))))
        except ValueError:
            continue
    return parts


def _observation_record(event: Output) -> dict[str, Any]:
    """The event an observation message was made from, its outputs in full (our import rebuilds it exactly)."""
    return {"event": event.kind, **Event.to_dict(event)}


def _assistant(logged: LoggedCall) -> ChatMessageAssistant:
    event, commands = logged.call, logged.commands
    assert isinstance(event, ModelCallEvent)
    response = event.response
    text = response.text
    content: str | list[Any] = text
    if response.reasoning is not None:  # an empty reasoning too: it goes back to the provider as sent
        content = [ContentReasoning(reasoning=response.reasoning), ContentText(text=text)]
    calls = [ToolCall(id=call.id, function=call.name, **_arguments(call.arguments)) for call in response.tool_calls]
    record = {key: value for key, value in response.logged().items() if key not in ("text", "reasoning")}
    record |= {"turn": event.turn, "latency_s": event.latency_s, "commands": commands}
    return ChatMessageAssistant(
        content=content, tool_calls=calls or None, model=event.model_id, source="generate", metadata={KEY: record}
    )


def _arguments(text: str) -> dict[str, Any]:
    """A tool call's JSON arguments as inspect keeps them (a dict), or its parse error; the exact text is in
    the message's metadata."""
    try:
        parsed = read_json(text)
    except UnreadableJson as error:
        return {"arguments": {}, "parse_error": f"the arguments are {error}"}
    return {"arguments": parsed if isinstance(parsed, dict) else {"value": parsed}}
