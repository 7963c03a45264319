"""Where a provider takes an image a tool returned, for what litellm sends as it is.

Our conversations carry an image a tool returned inside its tool message (`role: tool`, content a text part and
image parts), as inspect's tool results carry a ContentImage. litellm turns that into an image block inside
Anthropic's `tool_result`, which the Messages API documents. It sends it unchanged to OpenAI's chat API, which
takes only text in a tool message (a 400), and into Gemini's `functionResponse.parts`, which only Gemini 3's
multimodal function responses take. So for every provider but Anthropic the images move out of the tool
messages into one user message after them (the tool results stay first, as every API requires): the form the
OpenAI chat API documents for a tool's image, and one every provider takes.
"""

from __future__ import annotations

from harness.core.messages import Content, ContentPart, Message

_TOOL_RESULT_IMAGES = ("anthropic", "bedrock", "vertex_ai-anthropic_models")
"""Providers whose API takes an image inside a tool result (litellm maps it there)."""


def images_placed_for(provider: str, messages: list[Message]) -> list[Message]:
    """MESSAGES as PROVIDER takes them: unchanged for Anthropic and when no tool message holds an image; else the
    images of each run of tool messages moved into a user message after the run."""
    if provider in _TOOL_RESULT_IMAGES or not any(_tool_images(message) for message in messages):
        return messages
    placed: list[Message] = []
    moved: list[ContentPart] = []
    for message in messages:
        if message.get("role") == "tool":
            if images := _tool_images(message):
                moved.extend(images)
                message = {**message, "content": _text_of(message["content"])}
        elif moved:
            placed.append(_images_message(moved))
            moved = []
        placed.append(message)
    if moved:
        placed.append(_images_message(moved))
    return placed


def _tool_images(message: Message) -> list[ContentPart]:
    content = message.get("content")
    if message.get("role") != "tool" or not isinstance(content, list):
        return []
    return [part for part in content if part["type"] == "image_url"]


def _text_of(content: Content) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(part["text"] for part in content if part["type"] == "text")


def _images_message(images: list[ContentPart]) -> Message:
    noun = "image" if len(images) == 1 else "images"
    return {"role": "user", "content": [{"type": "text", "text": f"The {noun} the tool returned:"}, *images]}
