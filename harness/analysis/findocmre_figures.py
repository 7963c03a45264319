"""The FinDocMRE paper's figures from a report's rows. Figure 6: accuracy against the source document's page count,
one line per run, over the tasks' `pages` groups (the importer's page ranges); the accuracy is over the objective
questions, as the paper's. Figure 4: the three inputs of the zero-shot protocol (full pages, boxed pages, cropped
charts) side by side per type, one panel per model that ran more than one of them, each bar Table 3's metric."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib.pyplot as plt

from harness.analysis.figure_style import model_colours, save_figure
from harness.analysis.findocmre_scores import TYPES, table3_cells
from harness.analysis.runs import ModelRow, zero_shot_suffix

__all__ = ["PAGES", "accuracy_by_pages", "inputs_by_type", "inputs_figure", "page_count_figure"]

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


INPUTS = {"full": "Full PDF", "bbox": "PDF + BBox", "cropped": "Cropped Image"}
"""The zero-shot inputs in the paper's order, by its names (Section 4.4)."""


def inputs_by_type(rows: list[ModelRow], models: list[str]) -> dict[str, dict[str, dict[str, float]]]:
    """Model -> input -> type -> Table 3's metric on 0-100 (accuracy %, the open-ended score x20), for the models
    with runs of two or more inputs (a run's label is its model and ` (zero-shot INPUT)`)."""
    found: dict[str, dict[str, dict[str, float]]] = {}
    for label in models:
        mode = next((mode for mode in INPUTS if label.endswith(zero_shot_suffix(mode))), None)
        if mode is None:
            continue
        cells = table3_cells([r.row for r in rows if r.model == label])
        metrics = {name: cells.get("open_ended_100" if name == _OPEN else name) for name in TYPES}
        model = label.removesuffix(zero_shot_suffix(mode))
        found.setdefault(model, {})[mode] = {name: value for name, value in metrics.items() if value is not None}
    return {
        model: dict(sorted(by_input.items(), key=lambda item: list(INPUTS).index(item[0])))
        for model, by_input in found.items()
        if len(by_input) > 1
    }


def inputs_figure(rows: list[ModelRow], models: list[str], out: Path) -> str:
    """findocmre_inputs.png (and .pdf) and its Markdown; '' when no model ran two inputs."""
    data = inputs_by_type(rows, models)
    if not data:
        return ""
    figure, panels = plt.subplots(1, len(data), figsize=(5.6 * len(data), 3.6), squeeze=False)
    types = list(TYPES)
    for axes, (model, by_input) in zip(panels[0], data.items(), strict=True):
        width = 0.8 / len(by_input)
        for index, (mode, metrics) in enumerate(by_input.items()):
            shown = [name for name in types if name in metrics]
            axes.bar(
                [types.index(name) + (index - (len(by_input) - 1) / 2) * width for name in shown],
                [metrics[name] for name in shown],
                width,
                label=INPUTS[mode],
            )
        axes.set_xticks(range(len(types)), [TYPES[name] for name in types], fontsize="small")
        axes.set_ylim(0, 100)
        axes.set_ylabel("accuracy (%) / open-ended score ×20")
        axes.set_title(model)
        axes.legend(fontsize="small")
    figure.suptitle("The three inputs per type (the paper's Figure 4)")
    save_figure(figure, out / "findocmre_inputs.png")
    return "### The three inputs per type (Figure 4)\n\n![the three inputs per type](findocmre_inputs.png)\n\n"
