"""The FinDocMRE paper's Figure 6: accuracy against the source document's page count, one line per run, over the
tasks' `pages` groups (the importer's page ranges); the accuracy is over the objective questions, as the paper's."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib.pyplot as plt

from harness.analysis.figure_style import model_colours, save_figure
from harness.analysis.runs import ModelRow

__all__ = ["PAGES", "accuracy_by_pages", "page_count_figure"]

PAGES = "pages"
"""The task grouping that holds a task's page range (`1-10`, `11-20`, ..., `101+`)."""
_OPEN = "open_ended"
_FIRST_NUMBER = re.compile(r"\d+")


def _order(value: str) -> tuple[int, str]:
    found = _FIRST_NUMBER.match(value)
    return (int(found.group()) if found else 10**9), value


def accuracy_by_pages(rows: list[ModelRow], models: list[str]) -> dict[str, dict[str, tuple[float, int]]]:
    """Run label -> page range (in page order) -> (accuracy % over its objective questions, their count)."""
    found: dict[str, dict[str, tuple[float, int]]] = {}
    for model in models:
        mine = [r.row for r in rows if r.model == model and PAGES in r.row.task_groups]
        objective = [row for row in mine if row.task_type is not None and row.task_type != _OPEN]
        for value in sorted({row.task_groups[PAGES] for row in objective}, key=_order):
            group = [row for row in objective if row.task_groups[PAGES] == value]
            found.setdefault(model, {})[value] = (100 * sum(row.is_correct() for row in group) / len(group), len(group))
    return found


def page_count_figure(rows: list[ModelRow], models: list[str], out: Path) -> str:
    """findocmre_pages.png (and .pdf) and its Markdown; '' when no task carries a page range."""
    data = accuracy_by_pages(rows, models)
    if not data:
        return ""
    ranges = sorted({value for by_range in data.values() for value in by_range}, key=_order)
    colours = model_colours(models)
    figure, axes = plt.subplots(figsize=(6.4, 3.6))
    for model, by_range in data.items():
        shown = [value for value in ranges if value in by_range]
        axes.plot(
            [ranges.index(value) for value in shown],
            [by_range[value][0] for value in shown],
            marker="o",
            label=model,
            color=colours[model],
        )
    axes.set_xticks(range(len(ranges)), ranges)
    axes.set_xlabel("pages of the source document")
    axes.set_ylabel("accuracy (%), objective questions")
    axes.set_ylim(0, 100)
    axes.set_title("Accuracy against page count (the paper's Figure 6)")
    axes.legend(fontsize="small")
    save_figure(figure, out / "findocmre_pages.png")
    return "### Accuracy against page count (Figure 6)\n\n![accuracy against page count](findocmre_pages.png)\n\n"
