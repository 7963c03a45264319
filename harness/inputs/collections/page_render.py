"""A PDF's pictures (pdf_images.py) made in a worker process bounded as a conversion is (issue 45: a 31 KB PDF of
12 pages, built with `--max-memory 256 --max-time 10`, took 1.18 GB and wrote 780 MB in the builder's own
process). The worker has the conversion's memory and time caps, each page is at most `MAX_PAGE_IMAGE_BYTES` as
PNG and a document's pictures at most `MAX_DOCUMENT_IMAGE_BYTES`; it writes each picture into the collection
as it is made, so neither it nor the builder holds them all. Past a bound the document keeps its Markdown and
says why it has no pictures."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import Any

from harness.core.bounded import DIED, MEMORY, Stopped, bounded_map
from harness.core.images import DEFAULT_LIMITS
from harness.inputs.collections.conversion import Unconvertible
from harness.inputs.collections.limits import ConversionLimits
from harness.inputs.collections.manifest import write_bytes_atomic
from harness.inputs.collections.pdf_images import pdf_images

MAX_PAGE_IMAGE_BYTES = DEFAULT_LIMITS.max_bytes
"""A page's PNG: a larger one is an image no provider takes (core/images.py)."""
MAX_DOCUMENT_IMAGE_BYTES = 1024**3
"""A document's pictures in all; a 1,000-page report at 144 dpi takes a few hundred MB."""

Rendered = tuple[list[dict[str, Any]], str | None]
"""The pictures written (as the manifest lists them), or none and why."""


def render_pictures(pdf: Path, markdown_name: str, dpi: int, out: Path, limits: ConversionLimits) -> Rendered:
    """The PDF's pictures written under OUT (the collection) by a bounded worker; ([], why) past a bound."""
    work = functools.partial(_render, markdown_name=markdown_name, dpi=dpi, out=out)
    [(_, result)] = list(bounded_map([pdf], work, limits.process))
    if isinstance(result, Stopped):
        return [], _stopped(result, limits)
    return result


def _render(pdf: Path, markdown_name: str, dpi: int, out: Path) -> Rendered:
    """Runs in the worker: each picture written as it is made, the document's total bounded."""
    images, total = [], 0
    try:
        for image, data in pdf_images(pdf, markdown_name, dpi, MAX_PAGE_IMAGE_BYTES):
            total += len(data)
            if total > MAX_DOCUMENT_IMAGE_BYTES:
                raise Unconvertible(f"its pictures are over {MAX_DOCUMENT_IMAGE_BYTES:,} bytes in all")
            write_bytes_atomic(out / image.file, data, scratch=out.parent)
            images.append({k: v for k, v in dataclasses.asdict(image).items() if v is not None})
    except Unconvertible as error:
        return [], str(error)
    return images, None


def _stopped(stopped: Stopped, limits: ConversionLimits) -> str:
    if stopped.limit == MEMORY:
        return f"memory: rendering its pages needs more than {limits.memory_mb} MB (--max-memory)"
    if stopped.limit == DIED:
        return "the renderer's process died (a crash, or out of memory)"
    return f"time: rendering its pages took longer than {limits.seconds:g} s (--max-time)"
