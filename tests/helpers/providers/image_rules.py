"""Where each provider takes an image, in which encoding, within which limits, and the error it answers otherwise.

Each fake finds the images of a request in its own API's shape (`*_images`, which also checks where they are)
and checks them against its provider's documented limits (`check_images`); a broken rule is the provider's 400
(`ProviderRuleBroken`, its own message), and the images found are kept for the fake's model to read
(`LoopbackProvider.last_images`). Sources:

- OpenAI chat: https://platform.openai.com/docs/guides/images-vision (PNG, JPEG, WEBP, non-animated GIF; up to
  50 MB per request and 500 images) and the chat API reference: a `tool` message's content is text (string or
  text parts); an `image_url` part only in a `user` message (the service's 400: "Image URLs are only allowed for
  messages with role 'user', but this message with role 'tool' contains an image URL.").
- OpenAI Responses: https://platform.openai.com/docs/api-reference/responses: `input_image` (`image_url` a URL
  or a data URL) in a user message's content, or in a `function_call_output`'s output list; same limits.
- Anthropic: https://docs.claude.com/en/docs/build-with-claude/vision: `image` blocks with a `base64` source of
  `image/jpeg|png|gif|webp`, in a user message or inside a `tool_result`'s content; 5 MB and 8000x8000 px per
  image (2000x2000 past 20 images in a request), 100 images per request for a 200k-context model.
- Gemini: https://ai.google.dev/gemini-api/docs/image-understanding: `inline_data` (`mime_type`, base64 `data`)
  parts of PNG, JPEG, WEBP, HEIC, HEIF, no GIF; a whole request of inline data at most 20 MB.
"""

from __future__ import annotations

import base64
import binascii
import io
import re
from dataclasses import dataclass
from typing import Any

from PIL import Image

from tests.helpers.providers.loopback import ProviderRuleBroken

_DATA_URL = re.compile(r"data:(image/[a-z]+);base64,(.*)", re.DOTALL)


@dataclass(frozen=True)
class ImageRules:
    """One provider's documented limits."""

    media_types: frozenset[str]
    max_images: int
    max_image_bytes: int | None
    max_request_bytes: int
    max_side: int | None = None
    many_images: int | None = None
    """Past this many images in one request, `many_side` is the most a side may be (Anthropic)."""
    many_side: int | None = None


OPENAI_RULES = ImageRules(frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"}), 500, None, 50 << 20)
ANTHROPIC_RULES = ImageRules(
    frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"}), 100, 5 << 20, 32 << 20, 8000, 20, 2000
)
GEMINI_RULES = ImageRules(
    frozenset({"image/png", "image/jpeg", "image/webp", "image/heic", "image/heif"}), 3600, None, 20 << 20
)


@dataclass(frozen=True)
class FoundImage:
    where: str
    media_type: str
    data: bytes


def check_images(images: list[FoundImage], rules: ImageRules, provider: str) -> None:
    """Every image of one request against RULES, with PROVIDER's wording of what it refuses."""
    if len(images) > rules.max_images:
        raise ProviderRuleBroken(f"Too many images in the request: {len(images)} > {rules.max_images}")
    if sum(len(image.data) for image in images) > rules.max_request_bytes:
        raise ProviderRuleBroken(f"Request payload too large: images over {rules.max_request_bytes} bytes")
    for image in images:
        if image.media_type not in rules.media_types:
            raise ProviderRuleBroken(f"{image.where}: unsupported image media type {image.media_type}")
        if rules.max_image_bytes is not None and len(image.data) > rules.max_image_bytes:
            raise ProviderRuleBroken(
                f"{image.where}: image exceeds 5 MB maximum: {len(image.data)} bytes > {rules.max_image_bytes} bytes"
            )
        try:
            with Image.open(io.BytesIO(image.data)) as decoded:
                width, height = decoded.size
                actual = Image.MIME.get(str(decoded.format))
        except (OSError, ValueError, Image.DecompressionBombError):
            raise ProviderRuleBroken(f"{image.where}: Could not process image") from None
        if actual != image.media_type:
            raise ProviderRuleBroken(
                f"{image.where}: Image does not match the provided media type {image.media_type}"
                if provider == "anthropic"
                else f"{image.where}: Invalid image data"
            )
        side = rules.many_side if rules.many_images and len(images) > rules.many_images else rules.max_side
        if side is not None and max(width, height) > side:
            raise ProviderRuleBroken(
                f"{image.where}: At least one of the image dimensions exceed max allowed size: {side} pixels"
            )


def _decoded(where: str, data: str) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise ProviderRuleBroken(f"{where}: invalid base64 data") from None


def _from_url(where: str, url: Any) -> FoundImage:
    found = _DATA_URL.fullmatch(url) if isinstance(url, str) else None
    if found is None:
        raise ProviderRuleBroken(f"{where}: Invalid image URL: a data URL (data:image/...;base64,...) was expected")
    return FoundImage(where, found.group(1), _decoded(where, found.group(2)))


def openai_chat_images(body: dict[str, Any]) -> list[FoundImage]:
    images = []
    for index, message in enumerate(body.get("messages") or []):
        content = message.get("content")
        parts = content if isinstance(content, list) else []
        for position, part in enumerate(parts):
            if isinstance(part, dict) and part.get("type") == "image_url":
                if message.get("role") != "user":
                    raise ProviderRuleBroken(
                        f"Invalid 'messages[{index}]'. Image URLs are only allowed for messages with role 'user', "
                        f"but this message with role '{message.get('role')}' contains an image URL."
                    )
                url = (part.get("image_url") or {}).get("url")
                images.append(_from_url(f"messages[{index}].content[{position}]", url))
    return images


def openai_responses_images(body: dict[str, Any]) -> list[FoundImage]:
    images = []
    items = body.get("input") if isinstance(body.get("input"), list) else []
    for index, item in enumerate(items):
        parts = item.get("output") if item.get("type") == "function_call_output" else item.get("content")
        for position, part in enumerate(parts if isinstance(parts, list) else []):
            if isinstance(part, dict) and part.get("type") == "input_image":
                if item.get("type") != "function_call_output" and item.get("role") != "user":
                    raise ProviderRuleBroken(f"input[{index}]: input_image is only allowed in user input")
                images.append(_from_url(f"input[{index}].content[{position}]", part.get("image_url")))
    return images


def anthropic_images(body: dict[str, Any]) -> list[FoundImage]:
    images = []
    for index, message in enumerate(body.get("messages") or []):
        content = message.get("content")
        for position, block in enumerate(content if isinstance(content, list) else []):
            inner = block.get("content") if block.get("type") == "tool_result" else None
            nested = [(f"{position}.content.{n}", b) for n, b in enumerate(inner if isinstance(inner, list) else [])]
            for where, candidate in [(str(position), block), *nested]:
                if candidate.get("type") != "image":
                    continue
                place = f"messages.{index}.content.{where}.image.source"
                if message.get("role") != "user":
                    raise ProviderRuleBroken(f"{place}: images are only allowed in user messages")
                source = candidate.get("source") or {}
                if source.get("type") != "base64":
                    raise ProviderRuleBroken(f"{place}: a base64 source was expected")
                data = _decoded(place, source.get("data", ""))
                images.append(FoundImage(f"{place}.base64", str(source.get("media_type")), data))
    return images


def gemini_images(body: dict[str, Any]) -> list[FoundImage]:
    images = []
    for index, content in enumerate(body.get("contents") or []):
        parts = list(content.get("parts") or [])
        for part in parts:
            response = part.get("functionResponse") or part.get("function_response") or {}
            if response.get("parts"):
                raise ProviderRuleBroken(
                    f"contents[{index}]: multimodal function responses (functionResponse.parts) are supported by "
                    "Gemini 3 models only"
                )
        for position, part in enumerate(parts):
            inline = part.get("inlineData") or part.get("inline_data")
            if inline is None:
                continue
            where = f"contents[{index}].parts[{position}].inline_data"
            if content.get("role") not in ("user", None):
                raise ProviderRuleBroken(f"{where}: images are only allowed in user content")
            mime = inline.get("mimeType") or inline.get("mime_type")
            images.append(FoundImage(where, str(mime), _decoded(where, inline.get("data", ""))))
    return images
