"""The report's PNG plots (matplotlib, Agg: no display needed)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import matplotlib

from harness.analysis.summary import ALL, Cell
from harness.core.status import Status
from harness.records.results import ResultRow

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def accuracy_plot(table: dict[tuple[str, str], Cell], models: list[str], domains: list[str], path: Path) -> None:
    """Default-mode accuracy per domain, one bar per model, with 95% intervals."""
    figure, axes = plt.subplots(figsize=(max(6, 1.2 * len(domains) * max(len(models), 1)), 4))
    width = 0.8 / max(len(models), 1)
    for index, model in enumerate(models):
        xs: list[float] = []
        heights: list[float] = []
        errors: list[list[float]] = [[], []]
        for position, domain in enumerate(domains):
            cell = table.get((model, domain))
            if cell is None:
                continue
            low, high = cell.interval()
            xs.append(position + index * width)
            heights.append(100 * cell.accuracy())
            errors[0].append(max(0.0, 100 * (cell.accuracy() - low)))  # float noise at 0% and 100%
            errors[1].append(max(0.0, 100 * (high - cell.accuracy())))
        axes.bar(xs, heights, width, yerr=errors, capsize=3, label=model)
    axes.set_xticks([p + width * (len(models) - 1) / 2 for p in range(len(domains))], domains, rotation=30)
    axes.set_ylabel("accuracy (%), 95% CI")
    axes.set_ylim(0, 100)
    axes.legend(fontsize="small")
    _save(figure, path)


def residual_heatmap(table: dict[tuple[str, str], Cell], models: list[str], domains: list[str], path: Path) -> None:
    """Each model's per-domain accuracy minus its overall accuracy, in percentage points."""
    values = [[_residual(table, model, domain) for domain in domains] for model in models]
    figure, axes = plt.subplots(figsize=(max(5, 1.1 * len(domains)), max(2.5, 0.6 * len(models) + 1.5)))
    finite = [abs(v) for row in values for v in row if v is not None] or [1.0]
    limit = max(finite) or 1.0
    image = axes.imshow([[v if v is not None else 0 for v in row] for row in values], cmap="RdBu",
                        vmin=-limit, vmax=limit, aspect="auto")  # fmt: skip
    for i, row in enumerate(values):
        for j, value in enumerate(row):
            axes.text(j, i, "–" if value is None else f"{value:+.1f}", ha="center", va="center", fontsize=8)
    axes.set_xticks(range(len(domains)), domains, rotation=30)
    axes.set_yticks(range(len(models)), models)
    figure.colorbar(image, ax=axes, label="pp vs overall")
    _save(figure, path)


def _residual(table: dict[tuple[str, str], Cell], model: str, domain: str) -> float | None:
    cell, overall = table.get((model, domain)), table.get((model, ALL))
    if cell is None or overall is None or not cell.n:
        return None
    return 100 * (cell.accuracy() - overall.accuracy())


def submission_turns_plot(rows: list[ResultRow], path: Path) -> None:
    """At which turn answers were submitted, correct and incorrect apart."""
    answered = [row for row in rows if row.status is Status.ANSWERED]
    correct = [row.turns for row in answered if row.is_correct()]
    incorrect = [row.turns for row in answered if not row.is_correct()]
    figure, axes = plt.subplots(figsize=(6, 4))
    top = max(correct + incorrect, default=1)
    bins = range(1, top + 2)
    axes.hist(
        [correct, incorrect], bins=bins, stacked=True, label=["correct", "incorrect"], color=["tab:green", "tab:red"]
    )
    axes.set_xlabel("turn of the submitted answer")
    axes.set_ylabel("episodes")
    axes.legend()
    _save(figure, path)


def _save(figure: Any, path: Path) -> None:
    figure.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(figure)


def failure_mode_plot(counts: dict[str, Counter[str]], models: list[str], path: Path) -> None:
    """Wrong episodes per failure mode, one bar group per mode, one bar per model."""
    from harness.signals.failure_modes import MODES

    figure, axes = plt.subplots(figsize=(max(6, 1.5 * len(MODES) * max(len(models), 1) / 2), 4))
    width = 0.8 / max(len(models), 1)
    for index, model in enumerate(models):
        axes.bar([p + index * width for p in range(len(MODES))], [counts[model][m] for m in MODES], width, label=model)
    axes.set_xticks([p + width * (len(models) - 1) / 2 for p in range(len(MODES))],
                    [mode.replace("_", "\n") for mode in MODES])  # fmt: skip
    axes.set_ylabel("wrong episodes")
    axes.legend(fontsize="small")
    _save(figure, path)
