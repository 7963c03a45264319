"""The report's tables per task group (FinDocMRE's financial domain, language and S/M/L chart count: a task's
`groups`) and its protocols side by side on the same tasks (the paper's zero-shot inputs and the agent).

Each cell is the overall score (`type_metrics.overall`: accuracy for objective types, the scaled mean score for
scored ones, averaged over types) on 0-100, with the plain accuracy and the episodes it is over.
"""

from __future__ import annotations

import re

from harness.analysis.runs import ModelRow
from harness.analysis.type_metrics import overall, type_metrics
from harness.core.safe_text import markdown_cell
from harness.records.results import ResultRow, TaskKey

__all__ = ["group_sections"]

_CHART_ORDER = {"S": 0, "M": 1, "L": 2}


def _cell(rows: list[ResultRow]) -> str:
    if not rows:
        return "–"
    accuracy = 100 * sum(row.is_correct() for row in rows) / len(rows)
    score = overall(rows)
    shown = f"{100 * score:.1f} " if score is not None else ""
    return f"{shown}(acc {accuracy:.1f}%, n={len(rows)})"


def _order(value: str) -> tuple[int, int, str]:
    """S, M, L in that order; page ranges (`1-10`, `11-20`, `101+`) by their first page; the rest by name."""
    leading = re.match(r"\d+", value)
    return _CHART_ORDER.get(value, 3), int(leading.group()) if leading else 0, value


def group_sections(rows: list[ModelRow], models: list[str]) -> str:
    """One table per grouping the tasks have, then the protocols side by side; "" when no task has groups."""
    groupings = sorted({name for r in rows for name in r.row.task_groups})
    if not groupings:
        return ""
    lines = []
    for grouping in groupings:
        values = sorted({r.row.task_groups[grouping] for r in rows if grouping in r.row.task_groups}, key=_order)
        lines += [
            f"## Overall score by {markdown_cell(grouping)} (0-100; accuracy and episodes in brackets)",
            "",
            f"| {markdown_cell(grouping)} | " + " | ".join(map(markdown_cell, models)) + " |",
            "|---|" + "---|" * len(models),
        ]
        for value in values:
            cells = [
                _cell([r.row for r in rows if r.model == model and r.row.task_groups.get(grouping) == value])
                for model in models
            ]
            lines.append(f"| {markdown_cell(value)} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines) + "\n" + _side_by_side(rows, models)


def _side_by_side(rows: list[ModelRow], models: list[str]) -> str:
    """Every run label on the tasks they all ran: the paper's protocol and the agent compared on equal ground."""
    if len(models) < 2:
        return ""
    tasks: list[set[TaskKey]] = [{r.row.key for r in rows if r.model == model} for model in models]
    shared = set.intersection(*tasks)
    if not shared:
        return ""
    types = sorted({r.row.task_type for r in rows if r.row.task_type and r.row.key in shared})
    lines = [
        f"## Protocols side by side on the {len(shared)} tasks every run has (overall score 0-100, per type)",
        "",
        "| run | overall | " + " | ".join(map(markdown_cell, types)) + " |",
        "|---|---|" + "---|" * len(types),
    ]
    for model in models:
        mine = [r.row for r in rows if r.model == model and r.row.key in shared]
        metrics = type_metrics(mine)
        shown = [f"{100 * metrics[name][1]:.1f}" if name in metrics else "–" for name in types]
        lines.append(f"| {markdown_cell(model)} | {_cell(mine)} | " + " | ".join(shown) + " |")
    return "\n".join(lines) + "\n\n"
