"""The report's frontier section: per axis (cost, tokens, time) a figure, a table of the frontier's members and
the runs not placed; every run on every axis in frontier.csv."""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path

from harness.analysis.frontier import AXES, Frontier, FrontierPoint, RunIdentity, frontier
from harness.analysis.runs import ModelRow
from harness.core.safe_text import markdown_cell

FRONTIER_CSV = "frontier.csv"
_CSV_HEADER = (
    *("axis", "label", "solver", "model", "placed", "on_frontier"),
    *("accuracy", "accuracy_low", "accuracy_high", "per_task", "per_task_low", "per_task_high", "tasks", "episodes"),
)


def frontier_section(
    rows: Sequence[ModelRow], labels: Sequence[str], identities: Mapping[str, RunIdentity], out: Path
) -> str:
    """Writes frontier_<axis>.png (and .pdf) per axis that places two runs or more, and frontier.csv; returns the
    section's Markdown. LABELS: the report's runs, best first."""
    from harness.analysis.frontier_plot import frontier_plot

    found = [frontier(rows, labels, axis) for axis in AXES]
    lines = [
        "## Cost–accuracy frontier",
        "",
        "Each run is a point: its accuracy and what a task takes it (the mean per episode), each with its 95% "
        "interval clustered by task. A run is on the frontier when no other run is at most as dear and at least as "
        "accurate, and better on one of the two. Cost first; tokens and time as the same figure on other axes.",
        "",
    ]
    for each in found:
        lines += [f"### By {each.axis.title}", ""]
        if len(each.points) > 1:  # a figure compares runs: none for an axis that places one or none
            frontier_plot(each, labels, out / f"frontier_{each.axis.name}.png")
            lines += [f"![frontier by {each.axis.name}](frontier_{each.axis.name}.png)", ""]
        lines += _member_table(each, identities)
        if each.not_placed:
            named = ", ".join(f"`{markdown_cell(label)}`" for label in each.not_placed)
            lines += [f"Not placed ({each.axis.missing}): {named}.", ""]
    _write_csv(out / FRONTIER_CSV, found, identities)
    return "\n".join(lines) + "\n"


def _member_table(found: Frontier, identities: Mapping[str, RunIdentity]) -> list[str]:
    if not found.members:
        return []
    lines = [
        f"| frontier member | solver | model | accuracy % [95% CI] | {found.axis.title} [95% CI] | tasks |",
        "|---|---|---|---|---|---|",
    ]
    for point in found.members:
        who = identities.get(point.label, RunIdentity("–", "–"))
        lines.append(
            f"| {markdown_cell(point.label)} | {markdown_cell(who.solver)} | {markdown_cell(who.model)} | "
            f"{_accuracy(point)} | {_measure(point)} | {point.accuracy.tasks} |"
        )
    return [*lines, ""]


def _accuracy(point: FrontierPoint) -> str:
    a = point.accuracy
    return f"{100 * a.mean:.1f} [{100 * a.low:.1f}, {100 * a.high:.1f}]"


def _measure(point: FrontierPoint) -> str:
    x = point.per_task
    return f"{x.mean:.4g} [{x.low:.4g}, {x.high:.4g}]"


def _write_csv(path: Path, found: Sequence[Frontier], identities: Mapping[str, RunIdentity]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow([*_CSV_HEADER])
        for each in found:
            members = {point.label for point in each.members}
            for point in each.points:
                who = identities.get(point.label, RunIdentity("", ""))
                a, x = point.accuracy, point.per_task
                values = (a.mean, a.low, a.high, x.mean, x.low, x.high)
                placed = [each.axis.name, point.label, who.solver, who.model, True, point.label in members]
                writer.writerow([*placed, *(round(value, 6) for value in values), a.tasks, a.episodes])
            for label in each.not_placed:
                who = identities.get(label, RunIdentity("", ""))
                writer.writerow([each.axis.name, label, who.solver, who.model, False, False, *[""] * 8])
