"""Run folders read for analysis: the latest row per (label, domain, task, epoch) across folders.

Runs are merged by their label (run.yaml's `label`, else their model): shards of one protocol. Two runs under one
label whose protocols differ are refused, so a table cell never mixes two protocols."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.errors import InputError
from harness.records.failure_labels import EpisodeLabels, read_labels
from harness.records.results import ResultRow
from harness.records.run_folder import RunFolder
from harness.records.run_record import RunRecord

CLOSED_BOOK_SUFFIX = " (closed-book)"
"""A `--closed-book` run's label: the model's name and this, so its rows are never merged with a normal run's."""


@dataclass(frozen=True)
class ModelRow:
    """A results row with the run label that produced it (report merges the run folders of several models)."""

    model: str
    """The run's label: its model, unless `--label` or a protocol setting named it apart."""
    row: ResultRow


RowChange = Callable[[RunFolder, ResultRow], ResultRow]
"""What a report does to each row it reads (`report --prices`: its cost from other prices)."""


def load_runs(
    paths: list[Path], change: RowChange | None = None, labels: Mapping[Path, str] | None = None
) -> tuple[list[ModelRow], list[str]]:
    """Latest row per (label, domain, task, epoch) over all run folders; later folders win on overlap. LABELS
    (`report --label`) names some folders apart from their own label. With the rows, a line per label that
    merged several folders: which, and whose rows were kept where they overlap."""
    merged: dict[tuple[str, str, str, int], tuple[Path, ModelRow]] = {}
    protocols: dict[str, tuple[Path, dict[str, Any]]] = {}
    folders: dict[str, dict[Path, int]] = {}
    replaced: dict[tuple[str, Path, Path], int] = {}
    """(label, earlier folder, later folder) -> episodes both held (the later one's row kept)."""
    for path in paths:
        folder = RunFolder(path)
        record = folder.read_record()
        label = (labels or {}).get(path) or run_key(record)
        if label in protocols:
            _check_same_protocol(label, protocols[label], (path, record.protocol.model_dump()))
        else:
            protocols[label] = (path, record.protocol.model_dump())
        rows = folder.latest_rows()
        folders.setdefault(label, {})[path] = len(rows)
        for (domain, task_id, epoch), row in rows.items():
            key = (label, domain, task_id, epoch)
            if key in merged and merged[key][0] != path:
                earlier = (label, merged[key][0], path)
                replaced[earlier] = replaced.get(earlier, 0) + 1
            merged[key] = (path, ModelRow(label, row if change is None else change(folder, row)))
    if not merged:
        raise InputError("report: the run folders hold no results")
    return [row for _, row in merged.values()], _merge_notes(folders, replaced)


def _merge_notes(folders: dict[str, dict[Path, int]], replaced: dict[tuple[str, Path, Path], int]) -> list[str]:
    notes = []
    for label, counts in folders.items():
        if len(counts) < 2:
            continue
        parts = ", ".join(f"{path} ({count} episodes)" for path, count in counts.items())
        overlaps = [
            f"{count} episode{'s' * (count != 1)} in both {earlier} and {later}: {later.name}'s kept (the later "
            "folder given)"
            for (name, earlier, later), count in replaced.items()
            if name == label
        ]
        notes.append(f"merged {len(counts)} runs as {label!r}: {parts}" + "".join(f"; {o}" for o in overlaps))
    return notes


def run_key(record: RunRecord) -> str:
    """What the report groups a run folder's rows by: its label (closed-book and zero-shot runs apart): the one
    place."""
    label = record.report_label
    if record.config.closed_book and not label.endswith(CLOSED_BOOK_SUFFIX):
        label += CLOSED_BOOK_SUFFIX
    zero_shot = record.config.zero_shot
    if zero_shot and not label.endswith(zero_shot_suffix(str(zero_shot))):
        label += zero_shot_suffix(str(zero_shot))
    return label


def zero_shot_suffix(mode: str) -> str:
    """A `--zero-shot` run's label: the model's name and this (` (zero-shot cropped)`), apart from its agent runs."""
    return f" (zero-shot {mode})"


def load_labels(paths: list[Path], names: Mapping[Path, str] | None = None) -> dict[str, list[EpisodeLabels]]:
    """Label -> the judges' failure labels of its runs (`annotate`); runs without labels are left out. NAMES: as
    `load_runs`' labels."""
    found: dict[str, list[EpisodeLabels]] = {}
    for path in paths:
        folder = RunFolder(path)
        labels = read_labels(folder.failure_labels_path)
        if labels:
            found.setdefault((names or {}).get(path) or run_key(folder.read_record()), []).extend(labels)
    return found


def turn_limits(paths: list[Path], names: Mapping[Path, str] | None = None) -> dict[str, int]:
    """Label -> the largest `--max-turns` of its runs (the turn histogram's axis)."""
    limits: dict[str, int] = {}
    for path in paths:
        record = RunFolder(path).read_record()
        label = (names or {}).get(path) or run_key(record)
        if isinstance(max_turns := record.config.max_turns, int):
            limits[label] = max(limits.get(label, 0), max_turns)
    return limits


def judge_panels(paths: list[Path], names: Mapping[Path, str] | None = None) -> dict[str, list[str]]:
    """Label -> its judges (run.yaml's protocol, in panel order: a row's `judge_scores` order); labels whose runs
    asked no judge are left out."""
    panels: dict[str, list[str]] = {}
    for path in paths:
        record = RunFolder(path).read_record()
        judge = record.protocol.judge
        if judge is not None and judge.models:
            panels.setdefault((names or {}).get(path) or run_key(record), list(judge.models))
    return panels


def _protocol_differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """The protocol entries two runs disagree on. Entries only one run has (a shard without judged tasks has no
    `judge`) are not differences; graders are compared by name, as a shard uses only some of them."""
    differing = [key for key in sorted(a.keys() & b.keys()) if key != "graders" and a[key] != b[key]]
    graders_a, graders_b = a.get("graders") or {}, b.get("graders") or {}
    differing += [
        f"grader {name}" for name in sorted(graders_a.keys() & graders_b.keys()) if graders_a[name] != graders_b[name]
    ]
    return differing


def _check_same_protocol(label: str, first: tuple[Path, dict[str, Any]], second: tuple[Path, dict[str, Any]]) -> None:
    differing = _protocol_differences(first[1], second[1])
    if differing:
        raise InputError(
            f"report: {first[0]} and {second[0]} are both labelled {label!r} but their protocols differ "
            f"({', '.join(differing)}); name them apart with --label RUN=LABEL"
        )


@dataclass(frozen=True)
class PageResolution:
    """What a zero-shot run sent, as its run.yaml records it: the model, the input and the pages' resolution."""

    model: str
    input: str
    dpi: int

    @property
    def series(self) -> str:
        """Its line in a figure against resolution: `model (input)`."""
        return f"{self.model} ({self.input})"


def page_resolutions(paths: list[Path], names: Mapping[Path, str] | None = None) -> dict[str, PageResolution]:
    """Label -> the model, input and page resolution of its zero-shot runs (run.yaml's `zero_shot` protocol section);
    other runs, and runs whose pages came at several resolutions, are left out."""
    found: dict[str, PageResolution] = {}
    for path in paths:
        record = RunFolder(path).read_record()
        section = record.protocol.model_dump().get("zero_shot")
        if isinstance(section, dict) and isinstance(dpi := section.get("page_dpi"), int):
            run = PageResolution(str(record.config.model), str(section.get("input")), dpi)
            found.setdefault((names or {}).get(path) or run_key(record), run)
    return found
