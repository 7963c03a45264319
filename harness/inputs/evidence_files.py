"""A task's `evidence` checked against its collection: each name is a file of it, or the task is refused
(a misspelt or renamed file would leave the task's evidence recall short of 1 in every run, without a word)."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from pathlib import Path

from harness.core.errors import InputError
from harness.inputs.tasks import Task, collection_of


def check_evidence(tasks: list[Task], listed: Mapping[str, Collection[str]], tasks_dir: Path) -> None:
    """LISTED: collection name -> the names of its files. The first task naming a file its collection does
    not have raises `InputError` naming the task file, the line and the field."""
    for task in tasks:
        collection = collection_of(task)
        missing = [name for name in task.evidence if name not in listed[collection]]
        if missing:
            path = tasks_dir / f"{task.domain}.jsonl"
            raise InputError(
                f"{path}:{_line_of(path, task.id)}: field 'evidence': {missing[0]!r} is not a file of "
                f"collection {collection!r}"
            )


def _line_of(path: Path, task_id: str) -> int | str:
    """The task's line, read again only to say where it is (the file was read and checked already)."""
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if line.strip() and json.loads(line).get("id") == task_id:
                return number
    return "?"
