"""The report's PNG plots (matplotlib, Agg: no display needed)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import matplotlib

from harness.analysis.uncertainty import Estimate

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def accuracy_plot(table: Mapping[tuple[str, str], Estimate], models: list[str], domains: list[str], path: Path) -> None:
    """Default-mode accuracy over all episodes per domain, one bar per model, with 95% intervals clustered by task."""
    # the width grows with the bars, not with the legend (below the axes, in columns: long model names fit)
    figure, axes = plt.subplots(figsize=(min(24, max(6, 0.9 * len(domains) + 0.22 * len(domains) * len(models))), 4.5))
    width = 0.8 / max(len(models), 1)
    for index, model in enumerate(models):
        xs: list[float] = []
        heights: list[float] = []
        errors: list[list[float]] = [[], []]
        for position, domain in enumerate(domains):
            estimate = table.get((model, domain))
            if estimate is None:
                continue
            xs.append(position + index * width)
            heights.append(100 * estimate.mean)
            errors[0].append(max(0.0, 100 * (estimate.mean - estimate.low)))  # float noise at 0% and 100%
            errors[1].append(max(0.0, 100 * (estimate.high - estimate.mean)))
        bars = axes.bar(xs, heights, width, yerr=errors, capsize=3, label=model)
        axes.bar_label(bars, ["0%" if height == 0 else "" for height in heights], fontsize=7, padding=2)
    axes.set_title("Accuracy per domain (default mode)")
    axes.set_xticks([p + width * (len(models) - 1) / 2 for p in range(len(domains))], domains, rotation=30)
    axes.set_ylabel("accuracy (%), 95% CI clustered by task")
    axes.set_ylim(0, 100)
    axes.legend(
        fontsize="small",
        loc="upper center",
        bbox_to_anchor=(0.5, -0.25),
        ncol=min(4, max(1, len(models))),
        frameon=False,
    )
    save_figure(figure, path)


def save_figure(figure: Any, path: Path) -> None:
    """The PNG, with what its panels show (titles, axis labels, tick labels, legends) read from the figure
    itself into the PNG's `Description` text, so a test or a script can check the panels without OCR."""
    figure.savefig(path, dpi=110, bbox_inches="tight", metadata={"Description": json.dumps(describe(figure))})
    plt.close(figure)


def describe(figure: Any) -> dict[str, Any]:
    """The figure's title and, per visible panel, its title, axis labels, tick labels and legend entries."""
    panels = []
    for axes in figure.axes:
        if not axes.get_visible():
            continue
        legend = axes.get_legend()
        panels.append(
            {
                "title": axes.get_title(),
                "xlabel": axes.get_xlabel(),
                "ylabel": axes.get_ylabel(),
                "xticks": [t.get_text() for t in axes.get_xticklabels()],
                "yticks": [t.get_text() for t in axes.get_yticklabels()],
                "legend": [t.get_text() for t in legend.get_texts()] if legend else [],
                "texts": len(axes.texts),
                "lines": len(axes.get_lines()),
            }
        )
    title = figure._suptitle.get_text() if figure._suptitle is not None else ""
    return {"title": title, "panels": panels}


def failure_mode_plot(counts: dict[str, Counter[str]], models: list[str], path: Path) -> None:
    """Wrong episodes per failure mode, one bar group per mode, one bar per model."""
    from harness.diagnostics.failure_modes import MODES

    figure, axes = plt.subplots(figsize=(max(6, 1.5 * len(MODES) * max(len(models), 1) / 2), 4))
    width = 0.8 / max(len(models), 1)
    for index, model in enumerate(models):
        values = [counts[model][m] for m in MODES]
        bars = axes.bar([p + index * width for p in range(len(MODES))], values, width, label=model)
        axes.bar_label(bars, ["0" if value == 0 else "" for value in values], fontsize=7, padding=1)
    axes.set_title("Wrong episodes by failure mode (the offline rule)")
    axes.set_xticks(
        [p + width * (len(models) - 1) / 2 for p in range(len(MODES))], [mode.replace("_", "\n") for mode in MODES]
    )
    axes.set_ylabel("wrong episodes")
    axes.legend(fontsize="small")
    save_figure(figure, path)
