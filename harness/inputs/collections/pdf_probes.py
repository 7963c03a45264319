"""What a task import reads of its PDFs before any build (a page count; where an embedded figure is drawn), each
read in a process of its own under a memory and a time cap (core/bounded.py), as a build's conversions are: the
PDFs are the user's or a download's, and a hostile one can make pymupdf take gigabytes or hang. A PDF that goes
over a cap is read as unreadable (None), which its build then reports; the import goes on."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.core.bounded import Limits, Stopped, bounded_map
from harness.inputs.collections.limits import MAX_MEMORY_MB
from harness.inputs.collections.pdf_images import NoSuchImage, embedded_image_box, page_count

__all__ = ["PROBE_LIMITS", "Missing", "embedded_image_boxes", "page_counts"]

PROBE_LIMITS = Limits(memory_mb=MAX_MEMORY_MB, seconds=60.0)
"""Opening a PDF and reading one page's image list takes well under a second for a 1,000-page report."""

Box = tuple[float, float, float, float]
ImageRequest = tuple[Path, int, int]
"""A PDF, a page (1-based) and an image of it (1-based, `embedded_image_box`'s numbering)."""


@dataclass(frozen=True)
class Missing:
    """A page or an image the PDF does not have."""

    problem: str
    """Which (`NoSuchImage`'s words)."""


def page_counts(pdfs: list[Path], limits: Limits = PROBE_LIMITS) -> dict[Path, int | None]:
    """Each PDF's page count; None for one pymupdf cannot read or that went over LIMITS."""
    return {pdf: None if isinstance(count, Stopped) else count for pdf, count in bounded_map(pdfs, page_count, limits)}


def embedded_image_boxes(
    requests: list[ImageRequest], limits: Limits = PROBE_LIMITS
) -> dict[ImageRequest, Box | Missing | None]:
    """Where each requested image is drawn; `Missing` where the PDF lacks the page or the image; None where the PDF
    cannot be read or went over LIMITS."""
    found = bounded_map(requests, _box, limits)
    return {request: None if isinstance(box, Stopped) else box for request, box in found}


def _box(request: ImageRequest) -> Box | Missing | None:
    try:
        return embedded_image_box(*request)
    except NoSuchImage as missing:
        return Missing(str(missing))
