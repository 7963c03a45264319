"""The closed-book comparison of `report`: a normal and a `--closed-book` run of one model side by side.

A task the model answers correctly with an empty /workspace/documents is possibly contaminated (the answer
was in its training data) or guessable; the report lists them, their share per domain, and the normal run's
accuracy with them left out. Rows are keyed by (task, epoch): a task counts as answered closed-book when any
of its closed-book epochs was correct (as `leakage --closed-book` counts it), and the normal run's accuracy
is over its episodes.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from harness.analysis.runs import CLOSED_BOOK_SUFFIX, ModelRow
from harness.records.results import TaskKey


@dataclass(frozen=True)
class _ClosedBookComparison:
    """One model's normal run against its closed-book run, over the tasks both ran."""

    model: str
    answerable: list[TaskKey]
    """Tasks answered correctly (default mode) without documents, sorted."""
    tasks: dict[str, int]
    """Domain -> tasks both runs have."""
    answerable_by_domain: dict[str, int]
    """Domain -> tasks answered correctly closed-book."""
    correct_without: int
    """Normal-run episodes answered correctly, the closed-book-answerable tasks left out."""
    kept: int
    """Normal-run episodes left once the closed-book-answerable tasks are out."""
    correct_all: int
    """Normal-run episodes answered correctly, over every shared task."""
    episodes: int
    """Normal-run episodes of the shared tasks."""


def comparisons(rows: list[ModelRow]) -> list[_ClosedBookComparison]:
    """Every model that has both a normal and a closed-book run among the rows."""
    by_model: dict[str, dict[TaskKey, dict[int, bool]]] = {}
    for model_row in rows:
        epochs = by_model.setdefault(model_row.model, {}).setdefault(model_row.row.key, {})
        epochs[model_row.row.epoch] = model_row.row.is_correct()
    found = []
    for label in sorted(by_model):
        if not label.endswith(CLOSED_BOOK_SUFFIX) or label.removesuffix(CLOSED_BOOK_SUFFIX) not in by_model:
            continue
        model = label.removesuffix(CLOSED_BOOK_SUFFIX)
        closed, normal = by_model[label], by_model[model]
        shared = sorted(set(closed) & set(normal))
        answerable = [key for key in shared if any(closed[key].values())]
        kept = [key for key in shared if not any(closed[key].values())]
        tasks: dict[str, int] = {}
        by_domain: dict[str, int] = {}
        for domain, _ in shared:
            tasks[domain] = tasks.get(domain, 0) + 1
        for domain, _ in answerable:
            by_domain[domain] = by_domain.get(domain, 0) + 1
        found.append(
            _ClosedBookComparison(
                model,
                answerable,
                tasks,
                by_domain,
                sum(sum(normal[key].values()) for key in kept),
                sum(len(normal[key]) for key in kept),
                sum(sum(normal[key].values()) for key in shared),
                sum(len(normal[key]) for key in shared),
            )
        )
    return found


def closed_book_section(rows: list[ModelRow], out: Path) -> str:
    """The report's Markdown section, and `closed_book.csv` (one line per task answered without documents)."""
    found = comparisons(rows)
    if not found:
        return ""
    lines = ["## Closed-book control (tasks answered correctly with no documents)", ""]
    with (out / "closed_book.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["model", "domain", "task_id"])
        for comparison in found:
            writer.writerows([comparison.model, domain, task_id] for domain, task_id in comparison.answerable)
            lines += _model_lines(comparison)
    return "\n".join(lines) + "\n"


def _model_lines(comparison: _ClosedBookComparison) -> list[str]:
    shared = sum(comparison.tasks.values())
    without = f"{100 * comparison.correct_without / comparison.kept:.1f}" if comparison.kept else "–"
    lines = [
        f"### {comparison.model}",
        "",
        f"{len(comparison.answerable)} of {shared} tasks answered correctly closed-book in some epoch (possible "
        f"contamination or guessable answers). Accuracy with documents: "
        f"{100 * comparison.correct_all / comparison.episodes:.1f}% over all {comparison.episodes} episodes; "
        f"{without}% over the {comparison.kept} episodes of the tasks left once those are out.",
        "",
        "| domain | tasks | answered closed-book | share |",
        "|---|---|---|---|",
    ]
    for domain, count in sorted(comparison.tasks.items()):
        answered = comparison.answerable_by_domain.get(domain, 0)
        lines.append(f"| {domain} | {count} | {answered} | {100 * answered / count:.1f}% |")
    lines.append("")
    if comparison.answerable:
        lines += [
            "Answered closed-book: " + ", ".join(f"{domain}/{task_id}" for domain, task_id in comparison.answerable),
            "",
        ]
    return lines
