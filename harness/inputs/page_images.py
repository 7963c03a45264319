"""The images the paper's protocol (`--zero-shot`) gives the model for a task, from its collection's kept pages.

`collection build --page-images DPI` (and `tasks import findocmre`) keeps each PDF's pages as PNG and lists them
in the manifest with the resolution, and each PDF's embedded figures as stored. From those: `full` is every page
of the task's documents, `cropped` each of the task's charts as its embedded figure where the document has one
(chart_figures.py), else cut out of its page, `bbox` every page with the task's charts boxed. A chart's place is the
task's `metadata.charts` (`{id, page, bbox}` in PDF points), as the FinDocMRE import writes it.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.core.errors import InputError
from harness.core.image_decode import ImageDecoder
from harness.core.images import DEFAULT_LIMITS, CheckedImage, ImageLimits, ImageRefused
from harness.inputs.chart_figures import Figure, chart_figure, figures_of, unsent_format
from harness.inputs.collections.manifest import Entry, manifest_path, read_manifest
from harness.inputs.page_filter import filtered_pages
from harness.inputs.tasks import Task

__all__ = [
    "BOX_COLOUR",
    "BOX_COLOUR_NAME",
    "ZERO_SHOT_INPUTS",
    "CropSource",
    "DocumentPages",
    "cropped_images",
    "document_pages",
    "stored_sizes",
    "task_images",
]

ZERO_SHOT_INPUTS = ("full", "cropped", "bbox")
BOX_COLOUR = (255, 0, 0)
"""The box drawn around a chart for `bbox`: red, as FinDocMRE's paper draws it (Section 4.4, "overlaying red
bounding boxes")."""
BOX_COLOUR_NAME = "red"
"""Its name, as the prompt says it and run.yaml records it."""
_BOX_WIDTH_PT = 2.0


@dataclass(frozen=True)
class DocumentPages:
    """One document's kept pages: 1-based page number -> its PNG file, and the resolution they were kept at; its
    embedded figures by (page, number)."""

    collection: Path
    dpi: int
    files: dict[int, str]
    figures: dict[tuple[int, int], Figure] = field(default_factory=dict)

    def page(self, number: int) -> bytes:
        return (self.collection / self.files[number]).read_bytes()

    def figure(self, figure: Figure) -> bytes:
        return (self.collection / figure.file).read_bytes()

    def stored_bytes(self, number: int) -> int:
        """The page's file size on disk (nothing read)."""
        return (self.collection / self.files[number]).stat().st_size


def document_pages(task: Task, collection: Path, mode: str, page_filter: str = "none") -> list[DocumentPages]:
    """The pages of each of the task's documents (its `evidence`), those PAGE_FILTER keeps (page_filter.py); an
    `InputError` naming the task and what is missing when its collection kept no pages, or (for `cropped` and
    `bbox`) the task does not place its charts."""
    where = f"--zero-shot {mode}: task {task.domain}/{task.id}"
    manifest = read_manifest(manifest_path(collection))
    entries = {entry.name: entry for entry in manifest.documents} if manifest else {}
    if not task.evidence:
        raise InputError(f"{where}: lists no document (its 'evidence') to give the model as images")
    found = []
    for name in task.evidence:
        entry = entries.get(name)
        if entry is None or entry.image_dpi is None:
            raise InputError(
                f"{where}: {collection.name}/{name} has no page images (build the collection with --page-images)"
            )
        found.append(_pages(collection, entry, page_filter, _chart_pages(task) if name == task.evidence[0] else set()))
    if mode != "full":
        charts = _charts(task)
        if not charts:
            raise InputError(f"{where}: its metadata places no chart ('charts': [{{id, page, bbox}}])")
        missing = [chart for chart in charts if chart["page"] not in found[0].files]
        if missing:
            raise InputError(f"{where}: chart {missing[0]['id']} is on page {missing[0]['page']}, which has no image")
        for chart in charts:
            _check_box(chart, found[0], where)
    return found


def _check_box(chart: dict[str, Any], pages: DocumentPages, where: str) -> None:
    """A chart's box lies inside its page (the page's size read from its image's header, nothing decoded)."""
    from PIL import Image

    with Image.open(pages.collection / pages.files[chart["page"]]) as image:
        width, height = (side * 72 / pages.dpi for side in image.size)
    box: Any = chart.get("bbox")
    numbers = isinstance(box, list) and len(box) == 4 and all(_finite(value) for value in box)
    if not numbers or not (0 <= box[0] < box[2] <= width + 1 and 0 <= box[1] < box[3] <= height + 1):
        raise InputError(
            f"{where}: chart {chart['id']}: its bbox {box!r} is not inside page {chart['page']} "
            f"({width:.0f} x {height:.0f} points)"
        )


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _pages(collection: Path, entry: Entry, page_filter: str, keep: set[int]) -> DocumentPages:
    files = {int(image["page"]): str(image["file"]) for image in entry.images if image.get("kind") == "page"}
    kept = filtered_pages(dict(sorted(files.items())), entry.images, page_filter, keep)
    return DocumentPages(collection, int(entry.image_dpi or 0), kept, figures_of(entry.images))


def _chart_pages(task: Task) -> set[int]:
    return {chart["page"] for chart in _charts(task) if isinstance(chart.get("page"), int)}


def _charts(task: Task) -> list[dict[str, Any]]:
    """The task's own charts (`chart_ids`) with their page and box."""
    wanted = set(task.metadata.get("chart_ids") or [])
    charts = task.metadata.get("charts") or []
    return [chart for chart in charts if isinstance(chart, dict) and chart.get("id") in wanted]


def stored_sizes(
    task: Task, documents: list[DocumentPages], mode: str, limits: ImageLimits = DEFAULT_LIMITS
) -> tuple[int, int]:
    """How many images `task_images` makes, and the bytes on disk of the pages it sends whole (`full`, `bbox`; a
    crop of a render is smaller than its page, so `cropped` counts only its embedded figures, those within one
    image's LIMITS: a larger one is replaced by its render crop): for the request's limits, before any page is
    read."""
    if mode == "cropped":
        charts = _charts(task)
        figures = [chart_figure(chart, documents[0].figures) for chart in charts]
        stored = (documents[0].collection / figure.file for figure in figures if figure and not unsent_format(figure))
        sizes = [path.stat().st_size for path in stored]
        return len(charts), sum(size for size in sizes if size <= limits.max_bytes)
    sizes = [pages.stored_bytes(number) for pages in documents for number in pages.files]
    return len(sizes), sum(sizes)


def task_images(task: Task, documents: list[DocumentPages], mode: str) -> list[bytes]:
    """The PNGs for TASK under MODE (`full` or `bbox`; `cropped_images` gives the crops), in reading order."""
    if mode == "full":
        return [pages.page(number) for pages in documents for number in pages.files]
    first = documents[0]
    charts = _charts(task)
    if mode == "cropped":
        raise ValueError("the crops come from cropped_images")
    boxes: dict[int, list[list[float]]] = {}
    for chart in charts:
        boxes.setdefault(chart["page"], []).append(chart["bbox"])
    images = [_boxed(first.page(number), boxes.get(number, []), first.dpi) for number in first.files]
    return images + [pages.page(number) for pages in documents[1:] for number in pages.files]


@dataclass(frozen=True)
class CropSource:
    """Where one crop came from."""

    chart: str
    page: int
    source: str
    """`embedded` (the figure as the PDF stores it, at its own resolution) or `render` (cut from the page image)."""
    figure: str | None = None
    """The embedded figure's file in the collection (`embedded`), or the one that could not be sent (`render`)."""
    fallback: str | None = None
    """Why a chart that is an embedded figure was cut from the render instead (its format, or its decoding refused
    under the image limits: a decode bomb costs the figure, not the question)."""


def cropped_images(
    task: Task, documents: list[DocumentPages], limits: ImageLimits
) -> tuple[list[CheckedImage], list[CropSource]]:
    """TASK's charts, each as its embedded figure where the document has one that decodes within LIMITS, else cut
    out of its page render; each checked in a bounded decoder (`ImageRefused` for a render crop past LIMITS)."""
    first, decoder = documents[0], ImageDecoder(limits)
    images, sources = [], []
    try:
        for chart in _charts(task):
            figure = chart_figure(chart, first.figures)
            fallback = unsent_format(figure) if figure else None
            if figure is not None and fallback is None:
                try:
                    images.append(decoder.check(first.figure(figure)))
                    sources.append(CropSource(chart["id"], chart["page"], "embedded", figure.file))
                    continue
                except ImageRefused as refused:
                    fallback = f"{figure.file}: {refused}"
            images.append(decoder.check(_cropped(first.page(chart["page"]), chart["bbox"], first.dpi)))
            sources.append(CropSource(chart["id"], chart["page"], "render", figure.file if figure else None, fallback))
    finally:
        decoder.close()
    return images, sources


def _pixels(box: list[float], dpi: int) -> tuple[int, int, int, int]:
    scale = dpi / 72
    return round(box[0] * scale), round(box[1] * scale), round(box[2] * scale), round(box[3] * scale)


def _cropped(png: bytes, box: list[float], dpi: int) -> bytes:
    from PIL import Image

    with Image.open(io.BytesIO(png)) as page:
        return _png(page.crop(_pixels(box, dpi)))


def _boxed(png: bytes, boxes: list[list[float]], dpi: int) -> bytes:
    if not boxes:
        return png
    from PIL import Image, ImageDraw

    with Image.open(io.BytesIO(png)) as opened:
        page = opened.convert("RGB")
    draw = ImageDraw.Draw(page)
    width = max(1, round(_BOX_WIDTH_PT * dpi / 72))
    for box in boxes:
        x0, y0, x1, y1 = _pixels(box, dpi)
        draw.rectangle((x0 - width, y0 - width, x1 + width - 1, y1 + width - 1), outline=BOX_COLOUR, width=width)
    return _png(page)


def _png(image: Any) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()
