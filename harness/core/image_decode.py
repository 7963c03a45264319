"""Images checked in a worker process of their own, bounded in decode time and memory (issue 45: a progressive
JPEG of 5 MB, within every size limit, took 216 s to decode in the runner). `check_image` decodes each image
whole; here it does so as documents are converted (core/bounded.py), so an image that takes longer or more
memory is refused (`ImageRefused`, the agent's error) and the runner never holds the decode."""

from __future__ import annotations

from functools import partial

from harness.core.bounded import MEMORY, TIME, Limits, Stopped, bounded_map
from harness.core.images import DEFAULT_LIMITS, CheckedImage, ImageLimits, ImageRefused, check_image

DECODE_SECONDS = 20.0
"""Per image; a 25-megapixel PNG or baseline JPEG decodes in well under a second."""
DECODE_MEMORY_MB = 1024
"""Per worker process; a 25-megapixel image takes about 100 MB once decoded."""
DECODE = Limits(DECODE_MEMORY_MB, DECODE_SECONDS)


def check_images_bounded(
    images: list[bytes], limits: ImageLimits = DEFAULT_LIMITS, decode: Limits = DECODE
) -> list[CheckedImage]:
    """`check_image` of each, in order, in one worker process under DECODE; `ImageRefused` for the first that is
    not an image we send, or whose decode went over a bound (the message says which, and that bound)."""
    for data in images:  # the cheap checks first, without a process
        if len(data) > limits.max_bytes:
            check_image(data, limits)
    checked: dict[int, CheckedImage] = {}
    numbered = list(enumerate(images))
    for (number, _), result in bounded_map(numbered, partial(_checked, limits=limits), decode):
        if isinstance(result, Stopped):
            raise ImageRefused(_stopped(result, decode))
        checked[number] = result
    return [checked[number] for number in range(len(images))]


def check_image_bounded(data: bytes, limits: ImageLimits = DEFAULT_LIMITS, decode: Limits = DECODE) -> CheckedImage:
    """`check_images_bounded` of one image."""
    [image] = check_images_bounded([data], limits, decode)
    return image


def _checked(numbered: tuple[int, bytes], limits: ImageLimits) -> CheckedImage:
    return check_image(numbered[1], limits)


def _stopped(stopped: Stopped, decode: Limits) -> str:
    if stopped.limit == TIME:
        return f"the image takes longer than {decode.seconds:g} s to decode (a decode bomb); send a simpler image"
    if stopped.limit == MEMORY:
        return f"the image takes more than {decode.memory_mb} MB to decode (a decode bomb); send a smaller image"
    return "the image's decoder crashed; send another image"
