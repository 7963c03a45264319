"""The tokens an image takes in a provider's context, by each provider's documented rule, so a request's images
count against the model's window before it is sent (the episode's context budget, the zero-shot protocol's
"too large for one request").

- OpenAI (detail `high`, GPT-4o class): the image scaled to fit 2048x2048, then its shortest side to 768; 170
  tokens per 512 px tile, plus 85 (`low`: 85).
- Anthropic: scaled down (aspect kept) until its long edge is at most 1568 px and it is at most ~1.15
  megapixels (1092x1092 for 1:1), then width x height / 750. Anthropic now also documents 28x28 px patches
  (1092x1092: 1521); the older rule gives more (1590), the safe side for a budget.
- Gemini: 258 tokens when both sides are at most 384 px, else 258 per 768x768 tile.
Other providers (a local server's model) are counted by OpenAI's rule, the format they take.
"""

from __future__ import annotations

import math

from harness.core.images import image_of_part
from harness.core.messages import ContentPart, Message

_ANTHROPIC = ("anthropic", "bedrock", "vertex_ai-anthropic_models")
_GEMINI = ("gemini", "vertex_ai", "vertex_ai_beta")


def openai_image_tokens(width: int, height: int, detail: str = "high") -> int:
    if detail == "low":
        return 85
    scale = min(1.0, 2048 / max(width, height))
    fitted = (width * scale, height * scale)
    scale = min(1.0, 768 / min(fitted))
    return 85 + 170 * math.ceil(fitted[0] * scale / 512) * math.ceil(fitted[1] * scale / 512)


_ANTHROPIC_LONG_EDGE = 1568
_ANTHROPIC_PIXELS = 1092 * 1092
"""The largest image Anthropic does not scale down (its table: 1092x1092 for 1:1, ~1,600 tokens)."""


def anthropic_image_tokens(width: int, height: int) -> int:
    scale = min(1.0, _ANTHROPIC_LONG_EDGE / max(width, height), math.sqrt(_ANTHROPIC_PIXELS / (width * height)))
    return math.ceil(int(width * scale) * int(height * scale) / 750)


def gemini_image_tokens(width: int, height: int) -> int:
    if width <= 384 and height <= 384:
        return 258
    return 258 * math.ceil(width / 768) * math.ceil(height / 768)


def image_tokens(provider: str, width: int, height: int) -> int:
    """The tokens one WIDTHxHEIGHT image takes for a model of litellm's PROVIDER."""
    if provider in _ANTHROPIC:
        return anthropic_image_tokens(width, height)
    if provider in _GEMINI:
        return gemini_image_tokens(width, height)
    return openai_image_tokens(width, height)


def split_images(messages: list[Message]) -> tuple[list[Message], list[tuple[int, int]]]:
    """The messages with their image parts taken out (for a text tokenizer) and each image's (width, height)."""
    sizes: list[tuple[int, int]] = []
    text_only: list[Message] = []
    for message in messages:
        content = message.get("content")
        if not isinstance(content, list):
            text_only.append(message)
            continue
        kept: list[ContentPart] = []
        for part in content:
            image = image_of_part(part)
            if image is None:
                kept.append(part)
            else:
                sizes.append((image.ref.width, image.ref.height))
        text_only.append({**message, "content": kept})
    return text_only, sizes
