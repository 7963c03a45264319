"""`cropped` gives a chart as the embedded figure the PDF stores, at its own resolution, where the document has one
(its id names it, or its box is where it is drawn), and cuts it from the page render otherwise; a figure that cannot
be sent (its format, or a decode bomb) falls back to the render, and each crop says where it came from."""

from __future__ import annotations

import dataclasses
import io
import shutil
from pathlib import Path

import numpy as np
from PIL import Image

from harness.core.images import DEFAULT_LIMITS, ImageLimits
from harness.inputs.chart_figures import chart_figure, figures_of, unsent_format
from harness.inputs.collections.manifest import manifest_path
from harness.inputs.page_images import CropSource, cropped_images, document_pages, stored_sizes
from harness.inputs.tasks import Task, collection_of, load_task_file


def _task(project: Path, task_id: str = "acme-2024-ratio") -> Task:
    return {task.id: task for task in load_task_file(project / "tasks" / "findocmre.jsonl")}[task_id]


def _with_charts(task: Task, charts: list[dict]) -> Task:
    return dataclasses.replace(task, metadata=task.metadata | {"charts": charts})


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def test_a_chart_at_an_embedded_figure_is_that_figure_as_stored(findocmre_project: Path):
    task = _task(findocmre_project)  # Figures 1 and 2, on pages 2 and 3, each box where its figure is drawn
    collection = findocmre_project / "collections" / collection_of(task)
    images, sources = cropped_images(task, document_pages(task, collection, "cropped"), DEFAULT_LIMITS)
    folder = "documents_acme-2024.images"
    assert sources == [
        CropSource("fig1", 2, "embedded", f"{folder}/figure-p002-1.png"),
        CropSource("fig2", 3, "embedded", f"{folder}/figure-p003-1.png"),
    ]
    assert [image.data for image in images] == [(collection / source.figure).read_bytes() for source in sources]


def test_a_chart_elsewhere_is_cut_from_the_render_and_a_paper_id_names_its_figure(findocmre_project: Path):
    task = _task(findocmre_project)
    moved = [chart | {"bbox": [chart["bbox"][0] + 5, *chart["bbox"][1:]]} for chart in task.metadata["charts"]]
    moved[0] |= {"id": "page_2_image_1.png"}  # the paper's id: the figure whatever the box says
    task = _with_charts(task, moved)
    task = dataclasses.replace(task, metadata=task.metadata | {"chart_ids": ["page_2_image_1.png", "fig2"]})
    collection = findocmre_project / "collections" / collection_of(task)
    documents = document_pages(task, collection, "cropped")
    images, sources = cropped_images(task, documents, DEFAULT_LIMITS)
    assert [(source.chart, source.source) for source in sources] == [
        ("page_2_image_1.png", "embedded"),
        ("fig2", "render"),
    ]
    # the render crop: the box (its left side 5 points in) at the pages' 100 dpi, cut out of page 3's image
    assert np.array_equal(_pixels(images[1].data), _pixels(documents[0].page(3))[83:383, 57:450])


def test_a_figure_that_cannot_be_sent_costs_the_figure_not_the_question(findocmre_project: Path, tmp_path: Path):
    task = _task(findocmre_project)
    collection, kept = tmp_path / collection_of(task), findocmre_project / "collections" / collection_of(task)
    shutil.copytree(kept, collection)
    shutil.copy(manifest_path(kept), manifest_path(collection))
    bomb = Image.new("1", (9000, 9000))  # a few kilobytes of PNG, 81 million pixels once decoded
    bomb.save(collection / "documents_acme-2024.images" / "figure-p002-1.png", format="PNG")
    images, sources = cropped_images(task, document_pages(task, collection, "cropped"), DEFAULT_LIMITS)
    assert [source.source for source in sources] == ["render", "embedded"]
    assert sources[0].figure == "documents_acme-2024.images/figure-p002-1.png"
    assert "over the limit of 8000 pixels a side" in str(sources[0].fallback)
    assert (images[0].ref.width, images[0].ref.height) == (400, 300)


def test_a_figure_too_large_to_send_is_not_counted_against_the_request(findocmre_project: Path):
    """Its render crop goes instead, so the request's pre-check (sizes on disk, nothing read) counts the figure only
    when it is within one image's limits."""
    task = _task(findocmre_project)
    collection = findocmre_project / "collections" / collection_of(task)
    documents = document_pages(task, collection, "cropped")
    figures = [collection / "documents_acme-2024.images" / f"figure-p00{page}-1.png" for page in (2, 3)]
    assert stored_sizes(task, documents, "cropped") == (2, sum(path.stat().st_size for path in figures))
    assert stored_sizes(task, documents, "cropped", ImageLimits(max_bytes=1000)) == (2, 0)


def test_a_paper_id_names_its_figure_and_a_format_no_provider_takes_is_said():
    images = [
        {"file": "d.images/page-002.png", "kind": "page", "page": 2},
        {"file": "d.images/figure-p002-1.jpx", "kind": "figure", "page": 2, "bbox": [10, 10, 100, 100]},
        {"file": "d.images/figure-p002-2.png", "kind": "figure", "page": 2, "bbox": [10, 120, 100, 200]},
    ]
    figures = figures_of(images)
    assert chart_figure({"id": "page_2_image_2.png", "page": 2, "bbox": [0, 0, 5, 5]}, figures) == figures[(2, 2)]
    assert chart_figure({"id": "c", "page": 2, "bbox": [10.6, 9.5, 100, 100.9]}, figures) == figures[(2, 1)]
    assert chart_figure({"id": "c", "page": 2, "bbox": [12, 10, 100, 100]}, figures) is None  # 2 points off
    assert chart_figure({"id": "page_3_image_1.png", "page": 3, "bbox": [10, 10, 100, 100]}, figures) is None
    assert unsent_format(figures[(2, 1)]) == "d.images/figure-p002-1.jpx: its format (jpx) is not sent as it is"
    assert unsent_format(figures[(2, 2)]) is None
