"""Run folders read for analysis: the latest row per (model, domain, task, epoch) across folders."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.core.errors import InputError
from harness.records.failure_labels import EpisodeLabels, read_labels
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
    """Latest row per (model, domain, task, epoch) over all run folders; later folders win on overlap."""
    merged: dict[tuple[str, str, str, int], ModelRow] = {}
    for path in paths:
        folder = RunFolder(path)
        model = run_key(folder)
        for (domain, task_id, epoch), row in folder.latest_rows().items():
            merged[(model, domain, task_id, epoch)] = ModelRow(model, row)
    if not merged:
        raise InputError("report: the run folders hold no results")
    return list(merged.values())


def run_key(folder: RunFolder) -> str:
    """What the report groups a run folder's rows by (its model): the one place to change it."""
    config = folder.read_record().config
    return str(config["model"]) + (CLOSED_BOOK_SUFFIX if config.get("closed_book") else "")


def load_labels(paths: list[Path]) -> dict[str, list[EpisodeLabels]]:
    """Model -> the judges' failure labels of its runs (`annotate`); models without labels are left out."""
    found: dict[str, list[EpisodeLabels]] = {}
    for path in paths:
        folder = RunFolder(path)
        labels = read_labels(folder.failure_labels_path)
        if labels:
            found.setdefault(run_key(folder), []).extend(labels)
    return found
