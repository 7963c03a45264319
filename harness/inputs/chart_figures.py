"""Which embedded figure a chart is, where its document has one: the paper's crops are "the figures at their
original resolution", not cut from a page render. A collection built with `--page-images` already keeps each PDF's
embedded figures as stored in the PDF (`figure-pNNN-K.ext`, read by pymupdf in the build's bounded processes, with
the page and box each is drawn at); a chart is that figure when its id names it (`page_6_image_1.png`, the paper's
ids, K as `page.get_images(full=True)` numbers them) or when its box is where the figure is drawn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = ["BOX_TOLERANCE_PT", "SENT_FORMATS", "Figure", "chart_figure", "figures_of", "unsent_format"]

BOX_TOLERANCE_PT = 1.0
"""A chart's box and a figure's coincide when no side differs by more (both are rounded to 0.01 point; a box
written by hand from a viewer's reading is rarely better than a point)."""
SENT_FORMATS = ("png", "jpeg", "jpg", "webp")
"""The stored formats a figure can be sent in as it is (core/images.py: what every provider takes); a JPEG 2000 or
JBIG2 figure is cropped from the render instead."""
_FIGURE_FILE = re.compile(r"figure-p(\d{3,})-(\d+)\.(\w+)$")
_PAPER_ID = re.compile(r"page_(\d+)_image_(\d+)\.\w+")


@dataclass(frozen=True)
class Figure:
    """One embedded figure a collection kept."""

    file: str
    """Its path in the collection."""
    page: int
    number: int
    """Its place in its page's image list, from 1 (`K` of `figure-pNNN-K`)."""
    bbox: tuple[float, float, float, float] | None
    ext: str


def figures_of(images: list[dict[str, Any]]) -> dict[tuple[int, int], Figure]:
    """A manifest entry's figures by (page, number)."""
    found = {}
    for image in images:
        named = _FIGURE_FILE.search(str(image.get("file", ""))) if image.get("kind") == "figure" else None
        if named is None:
            continue
        box = image.get("bbox")
        bbox = (float(box[0]), float(box[1]), float(box[2]), float(box[3])) if isinstance(box, list) else None
        figure = Figure(str(image["file"]), int(named.group(1)), int(named.group(2)), bbox, named.group(3).lower())
        found[(figure.page, figure.number)] = figure
    return found


def chart_figure(chart: dict[str, Any], figures: dict[tuple[int, int], Figure]) -> Figure | None:
    """The figure CHART is: the one its id names on its page, else the one drawn at its box; None when neither."""
    named = _PAPER_ID.fullmatch(str(chart.get("id", "")))
    if named and int(named.group(1)) == chart.get("page"):
        figure = figures.get((int(named.group(1)), int(named.group(2))))
        if figure is not None:
            return figure
    box = chart.get("bbox")
    for figure in figures.values():
        if figure.page == chart.get("page") and figure.bbox is not None and _coincide(figure.bbox, box):
            return figure
    return None


def unsent_format(figure: Figure) -> str | None:
    """Why FIGURE cannot be sent as stored (its format), None when it can."""
    return None if figure.ext in SENT_FORMATS else f"{figure.file}: its format ({figure.ext}) is not sent as it is"


def _coincide(figure: tuple[float, float, float, float], box: Any) -> bool:
    return (
        isinstance(box, list)
        and len(box) == 4
        and all(abs(a - b) <= BOX_TOLERANCE_PT for a, b in zip(figure, box, strict=True))
    )
