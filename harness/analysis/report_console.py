"""What `report` prints: a few lines on the runs it merged and where the report is, never the report itself;
and the note the report gives when its models ran different task sets."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from harness.analysis.runs import ModelRow
from harness.analysis.summary import ALL, Cell
from harness.core.safe_text import for_terminal


def task_sets_note(rows: list[ModelRow], models: list[str]) -> str | None:
    """A sentence saying the `all` figures compare different tasks, when the models did not run the same ones."""
    tasks = {model: {(r.row.domain, r.row.task_id) for r in rows if r.model == model} for model in models}
    if len({frozenset(found) for found in tasks.values()}) <= 1:
        return None
    shared = set.intersection(*tasks.values())
    counts = ", ".join(f"{model} {len(found)}" for model, found in tasks.items())
    return (
        f"The models ran different task sets (tasks: {counts}; {len(shared)} shared): their `all` figures are over "
        "different tasks; the paired comparisons use the shared ones only."
    )


def print_summary(
    table: dict[tuple[str, str], Cell], models: list[str], note: str | None, out: Path, console: Console
) -> None:
    """One line per run label (tasks, episodes, default-mode accuracy over all), the note, and the path."""
    for model in models:
        cell = table[(model, ALL)]
        tasks = len({(row.domain, row.task_id) for row in cell.rows})
        line = f"{model}: {cell.accuracy():.1%} correct ({cell.correct()}/{cell.n} episodes, {tasks} tasks)"
        console.print(for_terminal(line), markup=False, highlight=False, soft_wrap=True)
    if note:
        console.print(for_terminal(note.replace("`", "")), markup=False, highlight=False, soft_wrap=True)
    console.print(
        f"report written to {for_terminal(str(out / 'report.md'))}", markup=False, highlight=False, soft_wrap=True
    )
