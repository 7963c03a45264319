"""The report's plots: accuracy per domain with its intervals, wrong episodes per failure mode (matplotlib, Agg:
no display needed; each saved as PNG and PDF by `figure_style.save_figure`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path

import matplotlib.pyplot as plt

from harness.analysis.figure_style import count_axis, mode_label, model_colours, save_figure
from harness.analysis.uncertainty import Estimate

_SPELLED_OUT = 3
"""Up to this many models each bar's label gives its interval too; beyond, the value only (the interval is
drawn, and written in `intervals.csv`)."""


def accuracy_plot(table: Mapping[tuple[str, str], Estimate], models: list[str], domains: list[str], path: Path) -> None:
    """Default-mode accuracy over all episodes per domain, one bar per model, each with its 95% interval clustered
    by task drawn as a whisker and its value written above it; the domains' task counts under their names."""
    width_inches = min(24, max(6, 0.9 * len(domains) + 0.3 * len(domains) * len(models)))
    figure, axes = plt.subplots(figsize=(width_inches, 4.8), layout="constrained")
    slanted = width_inches / max(len(domains), 1) < 1.2  # a domain's name and task count fit across above that
    width = 0.8 / max(len(models), 1)
    colours = model_colours(models)
    for index, model in enumerate(models):
        shown = [(p, table[(model, d)]) for p, d in enumerate(domains) if (model, d) in table]
        xs = [position + index * width for position, _ in shown]
        heights = [100 * e.mean for _, e in shown]
        below = [max(0.0, 100 * (e.mean - e.low)) for _, e in shown]  # float noise at 0% and 100%
        above = [max(0.0, 100 * (e.high - e.mean)) for _, e in shown]
        axes.bar(xs, heights, width, color=colours[model], label=model)
        axes.errorbar(xs, heights, yerr=[below, above], fmt="none", ecolor="black", elinewidth=1.2, capsize=4)
        for x, (_, estimate) in zip(xs, shown, strict=True):
            text = f"{100 * estimate.mean:.0f}%"
            if len(models) <= _SPELLED_OUT:
                text += f"\n[{100 * estimate.low:.0f}, {100 * estimate.high:.0f}]"
            axes.annotate(
                text,
                (x, 100 * estimate.high),
                xytext=(0, 3),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize=7,
                rotation=0 if len(models) <= _SPELLED_OUT else 90,
            )
    axes.set_title("Accuracy per domain (default mode)")
    axes.set_xticks(
        [p + width * (len(models) - 1) / 2 for p in range(len(domains))],
        [f"{domain}\n{_task_counts(table, models, domain)}" for domain in domains],
        rotation=30 if slanted else 0,
        ha="right" if slanted else "center",
    )
    axes.set_ylabel("accuracy (%), 95% CI clustered by task")
    axes.set_ylim(0, 118)  # room above 100% for the labels over a full whisker
    axes.set_yticks(range(0, 101, 20))
    axes.spines[["top", "right"]].set_visible(False)
    figure.legend(fontsize="small", loc="outside lower center", ncol=min(4, max(1, len(models))), frameon=False)
    save_figure(figure, path)


def _task_counts(table: Mapping[tuple[str, str], Estimate], models: list[str], domain: str) -> str:
    """'n=12 tasks', or the range when the models ran different numbers of the domain's tasks."""
    counts = sorted({table[(m, domain)].tasks for m in models if (m, domain) in table})
    if not counts:
        return ""
    shown = str(counts[0]) if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"
    return f"n={shown} task{'' if shown == '1' else 's'}"


def failure_mode_plot(counts: dict[str, Counter[str]], models: list[str], path: Path) -> None:
    """Wrong episodes per failure mode, one horizontal bar group per mode (names read across, never collide), one
    bar per model, each bar's count written at its end (0 too)."""
    from harness.diagnostics.failure_modes import MODES

    height = 0.8 / max(len(models), 1)
    figure, axes = plt.subplots(figsize=(7, 1.5 + 0.28 * len(MODES) * max(len(models), 2)), layout="constrained")
    colours = model_colours(models)
    for index, model in enumerate(models):
        values = [counts[model][m] for m in MODES]
        bars = axes.barh([p + index * height for p in range(len(MODES))], values, height, color=colours[model])
        bars.set_label(model)
        axes.bar_label(bars, [str(value) for value in values], fontsize=7, padding=2)
    axes.set_yticks([p + height * (len(models) - 1) / 2 for p in range(len(MODES))], [mode_label(m) for m in MODES])
    axes.invert_yaxis()  # the first mode on top, as the legend reads
    top = max((counts[m][mode] for m in models for mode in MODES), default=0)
    count_axis(axes, "x", top)
    if top == 0:
        axes.text(0.5, 0.5, "no wrong episode", transform=axes.transAxes, ha="center", color="grey")
    axes.set_title("Wrong episodes by failure mode (the offline rule)")
    axes.set_xlabel("wrong episodes")
    axes.spines[["top", "right"]].set_visible(False)
    figure.legend(fontsize="small", loc="outside lower center", ncol=2, frameon=False)
    save_figure(figure, path)
