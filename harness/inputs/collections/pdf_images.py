"""A PDF's pictures beside its Markdown (`collection build --page-images DPI`): every page rendered to PNG at the
given resolution, and every embedded figure saved as the file it is, with its page and caption (`Figure 3`, `图 3`).

The agent finds them in `<markdown stem>.images/`; the manifest lists them (the paper protocol reads the pages
from there). A chart whose values are only pixels can then be looked at rather than read as OCR text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.inputs.collections.conversion import Unconvertible

__all__ = [
    "IMAGES_SUFFIX",
    "MAX_DPI",
    "NoSuchImage",
    "PdfImage",
    "embedded_image_box",
    "images_folder",
    "page_count",
    "pdf_images",
]

IMAGES_SUFFIX = ".images"
MAX_DPI = 600
"""Above it a page of A4 is over 20 million pixels: more than any model takes, and a disk filler."""
MAX_PAGE_PIXELS = 25_000_000
"""A page larger at the asked resolution is not rendered (a hostile PDF can declare a page of 200 x 200 inches:
at 144 dpi a 3 GB pixmap). The same bound as an image the runner takes (core/images.py)."""
_CAPTION = re.compile(r"^\s*((?:Figure|Fig\.|Chart|Exhibit)\s*\d+[A-Za-z]?|[图圖表]\s*\d+)", re.IGNORECASE)
_CAPTION_DISTANCE = 60.0
"""Points between a figure and the text block that captions it (above or below)."""
_MIN_FIGURE_SIDE = 16
"""Smaller embedded images are rules, bullets and logos, not figures."""


@dataclass(frozen=True)
class PdfImage:
    """One picture file of a document, as the manifest lists it."""

    file: str
    """Its path relative to the collection (`documents_report.images/page-003.png`)."""
    kind: str
    """`page` (a whole page rendered) or `figure` (an embedded image as stored in the PDF)."""
    page: int
    """1-based page it is (or is on)."""
    width: int
    height: int
    caption: str | None = None
    """A figure's caption label (`Figure 3`) from the text block next to it; None when there is none."""
    bbox: tuple[float, float, float, float] | None = None
    """A figure's place on its page, in points from the top left."""


def images_folder(markdown_name: str) -> str:
    """`documents_report.md` -> `documents_report.images`."""
    return markdown_name.rsplit(".", 1)[0] + IMAGES_SUFFIX


def pdf_images(path: Path, markdown_name: str, dpi: int, max_page_bytes: int) -> Iterator[tuple[PdfImage, bytes]]:
    """Every page as PNG at DPI, then every distinct embedded figure, each with its bytes, one at a time (the
    caller writes each before the next is made); `Unconvertible` for a page over MAX_PAGE_BYTES as PNG."""
    import pymupdf

    try:
        document = pymupdf.open(path, filetype="pdf")
    except Exception as error:
        raise Unconvertible(f"corrupt PDF: {error}") from None
    with document:
        try:
            yield from _pictures(document, images_folder(markdown_name), dpi, max_page_bytes)
        except Unconvertible:
            raise
        except Exception as error:  # a damaged image stream or page: this document keeps its Markdown only
            raise Unconvertible(f"{type(error).__name__}: {error}") from None


def _pictures(document: Any, folder: str, dpi: int, max_page_bytes: int) -> Iterator[tuple[PdfImage, bytes]]:
    for page in document.pages():
        width, height = page.rect.width * dpi / 72, page.rect.height * dpi / 72
        if width * height > MAX_PAGE_PIXELS:
            raise Unconvertible(
                f"page {page.number + 1} would be {width:.0f} x {height:.0f} px at {dpi} dpi "
                f"(more than {MAX_PAGE_PIXELS:,} pixels)"
            )
    for page in document.pages():
        pixmap = page.get_pixmap(dpi=dpi)
        image = PdfImage(f"{folder}/page-{page.number + 1:03d}.png", "page", page.number + 1, pixmap.w, pixmap.h)
        data = pixmap.tobytes("png")
        del pixmap
        if len(data) > max_page_bytes:
            raise Unconvertible(
                f"page {page.number + 1} is {len(data):,} bytes as PNG at {dpi} dpi, over the limit of "
                f"{max_page_bytes:,} a page (no provider takes a larger image)"
            )
        yield image, data
    seen: set[int] = set()
    for page in document.pages():
        yield from _figures(document, page, folder, seen)


def _figures(document: Any, page: Any, folder: str, seen: set[int]) -> list[tuple[PdfImage, bytes]]:
    figures = []
    blocks = [block for block in page.get_text("blocks") if block[6] == 0]  # text blocks: (x0, y0, x1, y1, text, ...)
    for number, info in enumerate(page.get_images(full=True), start=1):
        xref = info[0]
        if xref in seen:
            continue
        seen.add(xref)
        extracted = document.extract_image(xref)
        if not extracted or min(extracted["width"], extracted["height"]) < _MIN_FIGURE_SIDE:
            continue
        rects = page.get_image_rects(xref)
        box = rects[0] if rects else None
        bbox = (round(box.x0, 2), round(box.y0, 2), round(box.x1, 2), round(box.y1, 2)) if box else None
        name = f"{folder}/figure-p{page.number + 1:03d}-{number}.{extracted['ext']}"
        image = PdfImage(
            name,
            "figure",
            page.number + 1,
            extracted["width"],
            extracted["height"],
            _caption(blocks, bbox),
            bbox,
        )
        figures.append((image, extracted["image"]))
    return figures


def _caption(blocks: list[Any], bbox: tuple[float, ...] | None) -> str | None:
    """The label of the nearest text block just above or below the figure that starts like a caption."""
    if bbox is None:
        return None
    best: tuple[float, str] | None = None
    for x0, y0, x1, y1, text, *_ in blocks:
        match = _CAPTION.match(text)
        overlaps = x0 < bbox[2] and x1 > bbox[0]
        gap = min(abs(y0 - bbox[3]), abs(bbox[1] - y1))
        if match and overlaps and gap <= _CAPTION_DISTANCE and (best is None or gap < best[0]):
            best = (gap, " ".join(match.group(1).split()))
    return best[1] if best else None


class NoSuchImage(Exception):
    """A page or an embedded image a PDF does not have (the message says which)."""


def embedded_image_box(path: Path, page_number: int, image_number: int) -> tuple[float, float, float, float] | None:
    """Where page PAGE_NUMBER (1-based) draws its IMAGE_NUMBER-th image (1-based, in `page.get_images(full=True)`
    order: the numbering of the figures saved here, `figure-pNNN-K`), in points from the top left, rounded as the
    manifest's boxes; None when pymupdf cannot read the PDF (its build then says why); `NoSuchImage` when the page
    or the image is not there."""
    import pymupdf

    try:
        document = pymupdf.open(path, filetype="pdf")
    except Exception:
        return None
    with document:
        if not 1 <= page_number <= document.page_count:
            raise NoSuchImage(f"{path.name} has no page {page_number} (it has {document.page_count})")
        page = document[page_number - 1]
        images = page.get_images(full=True)
        if not 1 <= image_number <= len(images):
            raise NoSuchImage(f"page {page_number} of {path.name} has {len(images)} images")
        rects = page.get_image_rects(images[image_number - 1][0])
        if not rects:
            raise NoSuchImage(f"image {image_number} of page {page_number} of {path.name} is not drawn on it")
        box = rects[0]
        return round(box.x0, 2), round(box.y0, 2), round(box.x1, 2), round(box.y1, 2)


def page_count(path: Path) -> int | None:
    """How many pages the PDF has; None when pymupdf cannot read it (its build then says why)."""
    import pymupdf

    try:
        with pymupdf.open(path, filetype="pdf") as document:
            return int(document.page_count)
    except Exception:
        return None
