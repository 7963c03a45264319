"""What the paper's protocol gives the model for a task (inputs/page_images.py), from the collection's kept pages:
every page, the task's charts (their embedded figures, or cut out at their boxes), or every page with the charts
boxed."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from harness.core.errors import InputError
from harness.core.images import DEFAULT_LIMITS
from harness.inputs.page_images import cropped_images, document_pages, task_images
from harness.inputs.tasks import collection_of, load_task_file


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def _red(png: bytes) -> int:
    """Pixels of the paper's box colour (Section 4.4: "red bounding boxes"); the charts' red series is darker."""
    return int(np.all(_pixels(png) == (255, 0, 0), axis=-1).sum())


def test_full_cropped_and_bbox_from_the_kept_pages(findocmre_project: Path):
    tasks = {task.id: task for task in load_task_file(findocmre_project / "tasks" / "findocmre.jsonl")}
    task = tasks["acme-2024-ratio"]  # Figures 1 and 2, on pages 2 and 3
    collection = findocmre_project / "collections" / collection_of(task)
    documents = document_pages(task, collection, "bbox")
    assert documents[0].dpi == 100 and list(documents[0].files) == [1, 2, 3, 4]
    full = task_images(task, documents, "full")
    assert full == [documents[0].page(number) for number in (1, 2, 3, 4)]
    cropped, _ = cropped_images(task, documents, DEFAULT_LIMITS)  # the embedded figures (test_chart_figures.py)
    assert [_pixels(image.data).shape for image in cropped] == [(300, 400, 3), (300, 400, 3)]
    boxed = task_images(task, documents, "bbox")
    assert [_red(png) > 1000 for png in boxed] == [False, True, True, False]
    assert boxed[0] == full[0] and boxed[3] == full[3]  # pages without the task's charts go as they are


def test_a_chart_box_outside_its_page_is_refused_before_any_image_is_made(findocmre_project: Path):
    """Issue 45: a box of a hand-written task file (the import checks its own) past the page was cropped as is:
    an OverflowError or Pillow's bomb error, a harness_error retried. It is an input error naming the task."""
    tasks = {task.id: task for task in load_task_file(findocmre_project / "tasks" / "findocmre.jsonl")}
    task = tasks["acme-2024-ratio"]
    charts = [chart | {"bbox": [0, 0, 1e308, 1e308]} for chart in task.metadata["charts"]]
    moved = dataclasses.replace(task, metadata=task.metadata | {"charts": charts})
    collection = findocmre_project / "collections" / collection_of(task)
    with pytest.raises(InputError, match=r"its bbox \[0, 0, 1e\+308, 1e\+308\] is not inside page 2 \("):
        document_pages(moved, collection, "cropped")
