"""The agent looks (`--vision`): an image file of its sandbox, asked for with the view_image tool, taken out of
the sandbox, checked as untrusted input, stored in the run folder by hash, and shown in the next message.

Everything that can be wrong with what the agent asks to see is the agent's error (`ImageRefused`, told in the
tool's result, a turn spent, no retry): no such file, too large, not an image of an accepted format, a bomb (of
pixels, or of decode time or memory: the image is decoded in a bounded worker, core/image_decode.py), more
images than an episode may show. The per-episode limits keep every request within each provider's own: the
images of a conversation travel again with every call, so 20 images (Anthropic lowers its size limit past 20 in
one request) of 14 MB in all (Gemini's 20 MB request, base64 adds a third) at most.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.core.image_decode import DECODE_SECONDS, ImageDecoder
from harness.core.images import DEFAULT_LIMITS, CheckedImage, ImageLimits, ImageRefused
from harness.inputs.limits import RequestLimits
from harness.records.image_store import ImageStore
from harness.sandboxes.base import Sandbox
from harness.sandboxes.file_read import FileUnreadable

_MAX_PATH = 4096
"""Linux's PATH_MAX: no longer path names a file (and the read's command stays far below the kernel's argument
limit, which would otherwise fail the sandbox's command, not the agent's)."""


@dataclass(frozen=True)
class VisionLimits:
    image: ImageLimits = DEFAULT_LIMITS
    per_episode: int = 20
    episode_bytes: int = 14 * 1024 * 1024
    read_timeout_s: float = 30.0
    """The read is the agent's action, but one of ours: bounded apart from the command timeout."""

    request: RequestLimits | None = None
    """The provider's limits these are taken from (recorded); None: the strictest, for a model calling none."""

    @classmethod
    def of(cls, limits: RequestLimits) -> VisionLimits:
        """The image tool's limits under a provider's: one image's bytes, and every image of the episode within
        one request (the conversation sends them all again)."""
        if not limits.calls_provider:
            return cls()
        return cls(limits.image, episode_bytes=limits.request_bytes, request=limits)

    def describe(self) -> dict[str, Any]:
        """The limits as the protocol records them (one image a turn: a reply makes exactly one tool call)."""
        return {
            "tool": "view_image",
            "formats": "PNG, JPEG, WebP",
            "max_image_bytes": self.image.max_bytes,
            "max_image_side": self.image.max_side,
            "max_image_pixels": self.image.max_pixels,
            "images_per_turn": 1,
            "images_per_episode": self.per_episode,
            "image_bytes_per_episode": self.episode_bytes,
            **({"request_limits": self.request.describe()} if self.request is not None else {}),
        }


@dataclass
class ImageViewer:
    """One episode's looks: what it has shown so far, and where the images go."""

    sandbox: Sandbox
    store: ImageStore
    limits: VisionLimits = field(default_factory=VisionLimits)
    shown: list[CheckedImage] = field(default_factory=list)
    decoder: ImageDecoder | None = None
    """The worker that decodes the episode's images, started at the first; `close` ends it."""

    def view(self, path: str, seconds_left: float) -> CheckedImage:
        """The image at PATH (as the sandbox sees it), checked and stored; `ImageRefused` says why not."""
        limits = self.limits
        if len(path) > _MAX_PATH:
            raise ImageRefused(f"the path is {len(path):,} characters; a path has at most {_MAX_PATH}")
        if len(self.shown) >= limits.per_episode:
            raise ImageRefused(f"this episode has shown its {limits.per_episode} images, the most it may")
        room = limits.episode_bytes - sum(image.ref.bytes for image in self.shown)
        max_bytes = min(limits.image.max_bytes, room)
        try:
            data = self.sandbox.read_bytes(path, max_bytes, min(limits.read_timeout_s, max(seconds_left, 0.0)))
        except FileUnreadable as problem:
            if max_bytes < limits.image.max_bytes and "over the limit" in str(problem):
                raise ImageRefused(
                    f"{problem}: the episode's images may total {limits.episode_bytes:,} bytes and {room:,} are left"
                ) from None
            raise ImageRefused(str(problem)) from None
        try:
            if self.decoder is None:
                self.decoder = ImageDecoder(limits.image)
            image = self.decoder.check(data, min(DECODE_SECONDS, max(seconds_left, 1.0)))
        except ImageRefused as problem:
            raise ImageRefused(f"{path}: {problem}") from None
        self.store.put(image)
        self.shown.append(image)
        return image

    def close(self) -> None:
        if self.decoder is not None:
            self.decoder.close()
