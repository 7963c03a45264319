"""What the paper's protocol gives the model for a task (inputs/page_images.py), from the collection's kept pages:
every page, the task's charts cut out at their boxes, or every page with the task's charts boxed."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from PIL import Image

from harness.inputs.page_images import BOX_COLOUR, document_pages, task_images
from harness.inputs.tasks import collection_of, load_task_file


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def _magenta(png: bytes) -> int:
    return int(np.all(_pixels(png) == BOX_COLOUR, axis=-1).sum())


def test_full_cropped_and_bbox_from_the_kept_pages(findocmre_project: Path):
    tasks = {task.id: task for task in load_task_file(findocmre_project / "tasks" / "findocmre.jsonl")}
    task = tasks["acme-2024-ratio"]  # Figures 1 and 2, on pages 2 and 3
    collection = findocmre_project / "collections" / collection_of(task)
    documents = document_pages(task, collection, "bbox")
    assert documents[0].dpi == 100 and list(documents[0].files) == [1, 2, 3, 4]
    full = task_images(task, documents, "full")
    assert full == [documents[0].page(number) for number in (1, 2, 3, 4)]
    cropped = task_images(task, documents, "cropped")
    assert [_pixels(png).shape for png in cropped] == [(300, 400, 3), (300, 400, 3)]  # 4 x 3 inches at 100 dpi
    assert np.array_equal(_pixels(cropped[0]), _pixels(full[1])[83:383, 50:450])
    boxed = task_images(task, documents, "bbox")
    assert [_magenta(png) > 1000 for png in boxed] == [False, True, True, False]
    assert boxed[0] == full[0] and boxed[3] == full[3]  # pages without the task's charts go as they are
