"""The frontier figure: each run a point with its intervals on both axes, the frontier drawn as a staircase
(matplotlib, Agg; saved as PNG and PDF by `figure_style.save_figure`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt

from harness.analysis.figure_style import model_colours, save_figure
from harness.analysis.frontier import Frontier


def frontier_plot(found: Frontier, labels: Sequence[str], path: Path) -> None:
    """FOUND's runs by their measure per task (x) and accuracy (y), whiskers their 95% intervals clustered by
    task, members ringed and joined by the frontier: from each member, the best accuracy at that measure holds
    until the next member's (a step, not a slope: no mix of two runs is evaluated). LABELS: the report's order,
    which gives each run its colour in every figure."""
    figure, axes = plt.subplots(figsize=(7, 5), layout="constrained")
    colours = model_colours(labels)
    members = {point.label for point in found.members}
    for point in found.points:
        x, y = point.per_task, point.accuracy
        axes.errorbar(
            [x.mean],
            [100 * y.mean],
            xerr=[[max(0.0, x.mean - x.low)], [max(0.0, x.high - x.mean)]],
            yerr=[[max(0.0, 100 * (y.mean - y.low))], [max(0.0, 100 * (y.high - y.mean))]],
            fmt="o",
            color=colours[point.label],
            ecolor=colours[point.label],
            elinewidth=1,
            capsize=3,
            markersize=7,
            markeredgecolor="black" if point.label in members else colours[point.label],
            label=point.label + (" (frontier)" if point.label in members else ""),
        )
    if found.members:
        xs = [point.per_task.mean for point in found.members]
        ys = [100 * point.accuracy.mean for point in found.members]
        axes.step(xs, ys, where="post", color="black", linewidth=1, linestyle="--", label="Pareto frontier")
    axes.set_title(f"Accuracy against {found.axis.title}")
    axes.set_xlabel(f"{found.axis.title}, 95% CI clustered by task")
    axes.set_ylabel("accuracy (%), 95% CI clustered by task")
    axes.set_ylim(-3, 103)
    axes.set_xlim(left=0)
    axes.spines[["top", "right"]].set_visible(False)
    if not found.points:
        axes.text(0.5, 0.5, f"no run placed: {found.axis.missing}", transform=axes.transAxes, ha="center")
    else:
        figure.legend(fontsize="small", loc="outside lower center", ncol=2, frameon=False)
    save_figure(figure, path)
