"""Images checked in a worker process of their own, bounded in decode time and memory (issue 45: a progressive
JPEG of 5 MB, within every size limit, took 216 s to decode in the runner). `check_image` decodes each image
whole; here it does so as documents are converted (core/bounded.py), so an image that takes longer or more
memory is refused (`ImageRefused`, the agent's error) and the runner never holds the decode. One worker serves
an episode's images (its start costs about half a second), each image under its own time cap."""

from __future__ import annotations

from functools import partial

from harness.core.bounded import MEMORY, TIME, BoundedWorker, Stopped
from harness.core.images import DEFAULT_LIMITS, CheckedImage, ImageLimits, ImageRefused, check_image

DECODE_SECONDS = 20.0
"""Per image; a 25-megapixel PNG or baseline JPEG decodes in well under a second."""
DECODE_MEMORY_MB = 1024
"""Per worker process; a 25-megapixel image takes about 100 MB once decoded."""


class ImageDecoder:
    """`check_image` in a bounded worker kept for many images; `close` ends the worker."""

    def __init__(self, limits: ImageLimits = DEFAULT_LIMITS, memory_mb: int = DECODE_MEMORY_MB) -> None:
        self.limits, self.memory_mb = limits, memory_mb
        self._worker = BoundedWorker(partial(check_image, limits=limits), memory_mb)

    def check(self, data: bytes, seconds: float = DECODE_SECONDS) -> CheckedImage:
        """The image checked and decoded within SECONDS and the memory cap; else `ImageRefused` saying which."""
        if len(data) > self.limits.max_bytes:
            check_image(data, self.limits)  # refuses it, without a process
        result = self._worker.run(data, seconds)
        if isinstance(result, Stopped):
            raise ImageRefused(_stopped(result, seconds, self.memory_mb))
        return result

    def close(self) -> None:
        self._worker.close()


def check_images_bounded(images: list[bytes], limits: ImageLimits = DEFAULT_LIMITS) -> list[CheckedImage]:
    """Each image checked by one `ImageDecoder`, in order; `ImageRefused` for the first that is refused."""
    decoder = ImageDecoder(limits)
    try:
        return [decoder.check(data) for data in images]
    finally:
        decoder.close()


def _stopped(stopped: Stopped, seconds: float, memory_mb: int) -> str:
    if stopped.limit == TIME:
        return f"the image takes longer than {seconds:g} s to decode (a decode bomb); send a simpler image"
    if stopped.limit == MEMORY:
        return f"the image takes more than {memory_mb} MB to decode (a decode bomb); send a smaller image"
    return "the image's decoder crashed; send another image"
