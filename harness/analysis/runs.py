"""Run folders read for analysis: the latest row per (model, domain, task) across folders."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.core.errors import InputError
from harness.records.results import ResultRow
from harness.records.run_folder import RunFolder

CLOSED_BOOK_SUFFIX = " (closed-book)"
"""A `--closed-book` run's label: the model's name and this, so its rows are never merged with a normal run's."""


@dataclass(frozen=True)
class ModelRow:
    """A results row with the model that produced it (report merges the run folders of several models)."""

    model: str
    row: ResultRow


def load_runs(paths: list[Path]) -> list[ModelRow]:
    """Latest row per (model, domain, task) over all run folders; later folders win on overlap."""
    merged: dict[tuple[str, str, str], ModelRow] = {}
    for path in paths:
        folder = RunFolder(path)
        config = folder.read_record().config
        model = str(config["model"]) + (CLOSED_BOOK_SUFFIX if config.get("closed_book") else "")
        for (domain, task_id), row in folder.latest_rows().items():
            merged[(model, domain, task_id)] = ModelRow(model, row)
    if not merged:
        raise InputError("report: the run folders hold no results")
    return list(merged.values())
