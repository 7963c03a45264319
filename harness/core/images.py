"""Images as untrusted input: bytes checked by Pillow before anything keeps or sends them, and the typed
reference (`ImageRef`) records, messages and token counts use in their place.

An image comes from where the agent could write it (its sandbox) or from a document; either way its bytes are
decoded once, fully, under limits, before they are stored or sent: the format is one every provider we send to
accepts (PNG, JPEG, WebP: Gemini takes no GIF, OpenAI no animated one), the file and its pixels are bounded, a
decompression bomb is refused by Pillow's own check before it is decoded, and a file that does not decode whole
is refused. What is wrong is said in one line for the agent (`ImageRefused`): it is the agent's error, never ours.
The bytes that pass are sent as they are (not re-encoded), so the hash names exactly what the model saw.
"""

from __future__ import annotations

import base64
import hashlib
import io
import re
import warnings
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import Any

from harness.core.messages import Content, ImageUrlPart, Message
from harness.core.record import Record

MEDIA_TYPES = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp"}
"""The formats accepted (Pillow's name -> media type): those OpenAI, Anthropic and Gemini all take."""
EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp"}
"""The file extension an image of each media type is stored under."""


ANTHROPIC_BASE64_BYTES = 5 * 1024 * 1024
"""Anthropic's limit on one image, on its base64 text (every 3 bytes of the file are 4 of base64)."""


@dataclass(frozen=True)
class ImageLimits:
    """What one image may be. The defaults are the strictest of the providers' documented per-image limits:
    Anthropic's 5 MB and 8000 px a side; the pixel cap keeps one decode under ~100 MB of memory. Anthropic counts
    its 5 MB (5,242,880 bytes) on the image's base64 text, not its file (https://docs.anthropic.com/en/docs/
    build-with-claude/vision; its 400 reads "image exceeds 5 MB maximum: N bytes > 5242880 bytes", as reported
    in anthropics/claude-code#14887; issue 45: a 4.6 MB PNG drew it), so a file may have three quarters of it."""

    max_bytes: int = ANTHROPIC_BASE64_BYTES * 3 // 4
    max_side: int = 8000
    max_pixels: int = 25_000_000


DEFAULT_LIMITS = ImageLimits()


class ImageRef(Record):
    """An image as records refer to it: stored once by its hash (records/image_store.py), never inline."""

    sha256: str
    """Hex SHA-256 of the image's bytes: its name in the run folder."""
    media_type: str
    """`image/png`, `image/jpeg` or `image/webp`."""
    width: int
    height: int
    bytes: int
    """The file's size."""


@dataclass(frozen=True)
class CheckedImage:
    """An image that passed `check_image`: its reference and the bytes to store and send."""

    ref: ImageRef
    data: bytes


class ImageRefused(ValueError):
    """The bytes are not an image we send: the message says why, for the agent (or the person) who gave them."""


@cache
def _pillow() -> ModuleType:
    """Pillow's Image module, loaded when an image is first read (a run without images never loads it), with
    Pillow's documented way to refuse what its bomb check only warns of (over MAX_IMAGE_PIXELS; twice that it
    refuses itself) set once for the process: `warnings.catch_warnings` is not safe across the runner's threads."""
    from PIL import Image

    warnings.simplefilter("error", Image.DecompressionBombWarning)
    return Image


def check_image(data: bytes, limits: ImageLimits = DEFAULT_LIMITS) -> CheckedImage:
    """The image if it is one of the accepted formats within `limits` and decodes whole; else `ImageRefused`."""
    Image = _pillow()
    if len(data) > limits.max_bytes:
        raise ImageRefused(
            f"the file is {len(data):,} bytes, over the limit of {limits.max_bytes:,} bytes per image "
            "(5 MB once base64-encoded, the most a provider takes); scale it down or compress it"
        )
    if not data:
        raise ImageRefused("the file is empty")
    try:
        with Image.open(io.BytesIO(data), formats=list(MEDIA_TYPES)) as image:
            width, height = image.size
            _check_size(width, height, limits)
            if getattr(image, "n_frames", 1) > 1:
                raise ImageRefused("the image is animated; send a single frame (e.g. saved as PNG)")
            image.load()
            media_type = MEDIA_TYPES[str(image.format)]
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as bomb:
        raise ImageRefused(f"the image is a decompression bomb: {bomb}") from None
    except Image.UnidentifiedImageError:
        accepted = ", ".join(MEDIA_TYPES)
        raise ImageRefused(f"the file is not an image of an accepted format ({accepted})") from None
    except (OSError, SyntaxError, ValueError, EOFError) as broken:
        if isinstance(broken, ImageRefused):
            raise
        raise ImageRefused(f"the image does not decode: {str(broken) or type(broken).__name__}") from None
    digest = hashlib.sha256(data).hexdigest()
    ref = ImageRef(sha256=digest, media_type=media_type, width=width, height=height, bytes=len(data))
    return CheckedImage(ref, data)


def _check_size(width: int, height: int, limits: ImageLimits) -> None:
    if width < 1 or height < 1:
        raise ImageRefused(f"the image is {width}x{height} pixels: it has no pixels")
    if max(width, height) > limits.max_side:
        raise ImageRefused(
            f"the image is {width}x{height} pixels, over the limit of {limits.max_side} pixels a side; scale it down"
        )
    if width * height > limits.max_pixels:
        raise ImageRefused(
            f"the image is {width}x{height} = {width * height:,} pixels, over the limit of {limits.max_pixels:,}; "
            "scale it down"
        )


def data_url(image: CheckedImage) -> str:
    """The image as a `data:` URL, the one way our messages carry an image's bytes."""
    return f"data:{image.ref.media_type};base64,{base64.b64encode(image.data).decode('ascii')}"


def image_part(image: CheckedImage) -> ImageUrlPart:
    """A message content part holding the image, in the OpenAI chat format our conversations use (litellm turns
    it into each provider's own; `models/images_wire.py` fixes what it does not)."""
    return {"type": "image_url", "image_url": {"url": data_url(image)}}


def with_images(text: str, images: list[CheckedImage]) -> Content:
    """A message's content: TEXT alone when there are no images (the form bash-only runs keep), else a text part
    followed by an image part per image."""
    if not images:
        return text
    return [{"type": "text", "text": text}, *(image_part(image) for image in images)]


def user_message(text: str, images: list[CheckedImage]) -> Message:
    """A user message of text followed by images."""
    return {"role": "user", "content": with_images(text, images)}


def tool_message(call_id: str, text: str, images: list[CheckedImage]) -> Message:
    """A tool result of text followed by images; the provider layer moves the images where each API takes them
    (models/images_wire.py)."""
    return {"role": "tool", "tool_call_id": call_id, "content": with_images(text, images)}


_DATA_URL = re.compile(r"data:(image/[a-z]+);base64,(.*)", re.DOTALL)


def image_of_part(part: Any) -> CheckedImage | None:
    """The image a content part carries as a data URL (our own `image_part`), None for any other part. Its bytes
    were checked when the part was made; the reference is read from them again (header only, no decode)."""
    if not isinstance(part, dict) or part.get("type") != "image_url":
        return None
    url = part.get("image_url", {}).get("url") if isinstance(part.get("image_url"), dict) else None
    found = _DATA_URL.fullmatch(url) if isinstance(url, str) else None
    if found is None:
        return None
    data = base64.b64decode(found.group(2))
    with _pillow().open(io.BytesIO(data), formats=list(MEDIA_TYPES)) as image:
        width, height = image.size
    digest = hashlib.sha256(data).hexdigest()
    ref = ImageRef(sha256=digest, media_type=found.group(1), width=width, height=height, bytes=len(data))
    return CheckedImage(ref, data)
