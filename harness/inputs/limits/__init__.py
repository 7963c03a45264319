"""What one request to the run's provider may carry (images, bytes an image, bytes a request): each provider's
documented limits, from `providers.yaml`, by the provider the model resolves to; any other provider gets the
strictest of each, and says so when recorded."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from harness.core.images import DEFAULT_LIMITS, CheckedImage, ImageLimits
from harness.core.yaml_safe import load_yaml

__all__ = ["RequestLimits", "request_limits"]

_PROVIDER_LIMITS = Path(__file__).parent / "providers.yaml"


@dataclass(frozen=True)
class RequestLimits:
    """One request's limits under one provider."""

    provider: str
    """The provider they are documented for, or `strictest`."""
    images_per_request: int
    image_bytes: int
    """One image file's bytes at most."""
    request_bytes: int
    """The bytes of every image of a request together at most."""
    many_images: int | None = None
    """Past this many images a request, each may have at most `side_when_many` px a side (Anthropic)."""
    side_when_many: int | None = None
    source: str | None = None
    """The documentation page they are read from."""
    note: str | None = None
    """Why these limits apply when they are not the provider's own (the strictest, for a provider not listed)."""
    calls_provider: bool = True
    """False for a model that calls no provider (oracle, scripted, replay): its runs record no limits."""

    @property
    def image(self) -> ImageLimits:
        """What one image may be under them (the side and pixel caps are ours: one decode's memory)."""
        return ImageLimits(self.image_bytes, DEFAULT_LIMITS.max_side, DEFAULT_LIMITS.max_pixels)

    def refusal(self, images: list[CheckedImage]) -> str | None:
        """Why these images cannot go in one request; None when they can."""
        widest = max((max(image.ref.width, image.ref.height) for image in images), default=0)
        return self._refusal(len(images), widest, sum(image.ref.bytes for image in images))

    def stored_refusal(self, count: int, stored_bytes: int) -> str | None:
        """Why COUNT images made from pages of STORED_BYTES on disk cannot go in one request, before any page is
        read (their sides are checked once they are)."""
        return self._refusal(count, 0, stored_bytes)

    def _refusal(self, count: int, widest: int, total: int) -> str | None:
        if count > self.images_per_request:
            return f"{count} images > the {self.images_per_request} one request may carry"
        many, side = self.many_images, self.side_when_many
        if many is not None and side is not None and count > many and widest > side:
            return (
                f"{count} images with a side of {widest} px: past {many} images a request, "
                f"each may have at most {side} px a side"
            )
        if total > self.request_bytes:
            return f"{total:,} bytes of images > the {self.request_bytes:,} one request may carry"
        return None

    def describe(self) -> dict[str, Any]:
        """The limits as run.yaml's protocol records them."""
        fields = {
            "provider": self.provider,
            "images_per_request": self.images_per_request,
            "image_bytes": self.image_bytes,
            "request_bytes": self.request_bytes,
            "many_images": self.many_images,
            "side_when_many": self.side_when_many,
            "source": self.source,
            "note": self.note,
        }
        return {key: value for key, value in fields.items() if value is not None}


def request_limits(provider: str | None) -> RequestLimits:
    """PROVIDER's documented limits; the strictest known for any other provider (None: a model that calls none)."""
    known = _known()
    if provider in known:
        return known[provider]
    strictest = _strictest(list(known.values()))
    what = f"provider {provider!r} has no documented limits here" if provider else "the model calls no provider"
    return RequestLimits(
        "strictest",
        strictest.images_per_request,
        strictest.image_bytes,
        strictest.request_bytes,
        strictest.many_images,
        strictest.side_when_many,
        note=f"{what}: the strictest of {', '.join(known)}",
        calls_provider=provider is not None,
    )


@cache
def _known() -> dict[str, RequestLimits]:
    data = load_yaml(_PROVIDER_LIMITS.read_text(encoding="utf-8"), str(_PROVIDER_LIMITS))
    return {name: RequestLimits(name, **fields) for name, fields in data["providers"].items()}


def _strictest(limits: list[RequestLimits]) -> RequestLimits:
    return RequestLimits(
        "strictest",
        images_per_request=min(one.images_per_request for one in limits),
        image_bytes=min(one.image_bytes for one in limits),
        request_bytes=min(one.request_bytes for one in limits),
        many_images=min((one.many_images for one in limits if one.many_images is not None), default=None),
        side_when_many=min((one.side_when_many for one in limits if one.side_when_many is not None), default=None),
    )
