"""The paper's figures from a run, drawn for many models: the residual heatmap, the failure-mode radar and the
submission-turn distribution (matplotlib, Agg)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import matplotlib

from harness.analysis.accuracy_table import Accuracies
from harness.analysis.plots import save_figure
from harness.analysis.summary import ALL

matplotlib.use("Agg")
import matplotlib.pyplot as plt

_TURN_CAP = 100
"""The turn distribution's axis when a model's turn budget is unknown; later submissions are counted in the
panel's title."""
RADAR_FROM = 3
"""Models from which the failure-mode chart is a radar; fewer are grouped bars (one polygon is hard to read)."""


def residual_heatmap(table: Accuracies, models: list[str], tiers: list[list[str]], path: Path) -> None:
    """Each cell: the model's domain accuracy minus its overall accuracy (large, pp) over the domain accuracy
    (small); diverging colours centred on zero; a rule between tiers."""
    domains = sorted({d for (m, d) in table if d != ALL and m in models})
    residuals = [[_residual(table, model, domain) for domain in domains] for model in models]
    limit = max((abs(v) for row in residuals for v in row if v is not None), default=1.0) or 1.0
    figure, axes = plt.subplots(figsize=(2.5 + 1.05 * len(domains), 1.4 + 0.62 * len(models)))
    image = axes.imshow(
        [[math.nan if v is None else v for v in row] for row in residuals],
        cmap="RdBu",
        vmin=-limit,
        vmax=limit,
        aspect="auto",
    )
    for i, model in enumerate(models):
        for j, domain in enumerate(domains):
            value = residuals[i][j]
            if value is None:
                axes.text(j, i, "–", ha="center", va="center", fontsize=10)
                continue
            colour = "white" if abs(value) > 0.6 * limit else "black"
            axes.text(j, i - 0.1, f"{value:+.1f}", ha="center", va="center", fontsize=11, weight="bold", color=colour)
            axes.text(
                j, i + 0.27, f"{100 * table[(model, domain)]:.1f}%", ha="center", va="center", fontsize=7, color=colour
            )
    axes.set_xticks(range(len(domains)), domains, rotation=30, ha="right")
    axes.set_yticks(range(len(models)), [f"{m} ({100 * table[(m, ALL)]:.1f}%)" for m in models])
    boundary = 0
    for group in tiers[:-1]:
        boundary += len(group)
        axes.axhline(boundary - 0.5, color="black", linewidth=2.5)
    axes.set_title("Per-domain residual (pp) vs each model's overall accuracy; small: domain accuracy")
    figure.colorbar(image, ax=axes, label="domain accuracy − overall (pp)", shrink=0.8)
    save_figure(figure, path)


def _residual(table: Accuracies, model: str, domain: str) -> float | None:
    if (model, domain) not in table or (model, ALL) not in table:
        return None
    return 100 * (table[(model, domain)] - table[(model, ALL)])


def failure_radar(
    shares: Mapping[str, Mapping[str, float]], modes: list[str], panels: list[list[str]], path: Path
) -> None:
    """One polar panel per group of models (frontier, lower tiers), each on its own radial scale; one polygon
    per model: the share of its questions implicated in each failure mode."""
    figure, axes_list = plt.subplots(
        1, len(panels), subplot_kw={"projection": "polar"}, figsize=(6.2 * len(panels), 6.4), squeeze=False
    )
    angles = [2 * math.pi * i / len(modes) for i in range(len(modes))]
    names = ["frontier tier", "lower tiers"] if len(panels) == 2 else ["all models"]
    for axes, group, name in zip(axes_list[0], panels, names, strict=True):
        top = max((shares[m][mode] for m in group for mode in modes), default=0.0)
        scale = min(1.0, max(0.05, math.ceil(top * 1.1 * 20) / 20))  # a multiple of 5%, at most 100%
        for model in group:
            values = [shares[model][mode] for mode in modes]
            axes.plot([*angles, angles[0]], [*values, values[0]], linewidth=1.8, label=model)
            axes.fill([*angles, angles[0]], [*values, values[0]], alpha=0.08)
        axes.set_xticks(angles, [mode.replace("_", "\n") for mode in modes], fontsize=9)
        axes.set_ylim(0, scale)
        ticks = [scale * i / 4 for i in range(1, 5)]
        axes.set_yticks(ticks, [f"{100 * t:.0f}%" for t in ticks], fontsize=7)
        axes.set_title(f"{name} (radial scale 0–{100 * scale:.0f}%)", pad=24)
        if top == 0:
            axes.text(0, 0, "no question carries a mode", ha="center", va="center", fontsize=10, color="grey")
        axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, fontsize=8, frameon=False)
    figure.suptitle("Share of questions implicated in each failure mode (a question may carry several)", y=1.03)
    save_figure(figure, path)


def failure_bars(shares: Mapping[str, Mapping[str, float]], modes: list[str], models: list[str], path: Path) -> None:
    """The radar's figures for fewer than RADAR_FROM models: per mode one bar per model, 0% drawn and labelled."""
    figure, axes = plt.subplots(figsize=(max(6.0, 1.3 * len(modes) * max(len(models), 1)), 4.2))
    width = 0.8 / max(len(models), 1)
    for index, model in enumerate(models):
        xs = [position + index * width for position in range(len(modes))]
        values = [100 * shares[model][mode] for mode in modes]
        bars = axes.bar(xs, values, width, label=model)
        axes.bar_label(bars, [f"{value:.0f}%" for value in values], fontsize=7, padding=1)
    axes.set_xticks(
        [p + width * (len(models) - 1) / 2 for p in range(len(modes))], [m.replace("_", "\n") for m in modes]
    )
    axes.set_ylabel("questions implicated (%)")
    axes.set_ylim(0, max(5.0, min(100.0, 1.2 * max((100 * v for s in shares.values() for v in s.values()), default=0))))
    axes.set_title("Share of questions implicated in each failure mode (a question may carry several)")
    axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2, fontsize=8, frameon=False)
    save_figure(figure, path)


def turn_distribution(
    turns: Mapping[str, list[tuple[int, bool]]], models: list[str], path: Path, limits: Mapping[str, int]
) -> None:
    """One panel per model: its answered episodes by the turn of the answer, correct and incorrect stacked,
    turns 1 to the model's turn budget (LIMITS: its runs' `--max-turns`; _TURN_CAP when unknown)."""
    columns = min(4, max(1, len(models)))
    rows = math.ceil(len(models) / columns)
    figure, axes_grid = plt.subplots(rows, columns, figsize=(4.2 * columns, 2.8 * rows), squeeze=False)
    for index, axes in enumerate(axes_grid.flat):
        if index >= len(models):
            axes.set_visible(False)
            continue
        model = models[index]
        cap = limits.get(model, _TURN_CAP)
        positions = list(range(1, cap + 1))
        answered = turns.get(model, [])
        correct = [sum(1 for t, ok in answered if ok and t == turn) for turn in positions]
        wrong = [sum(1 for t, ok in answered if not ok and t == turn) for turn in positions]
        axes.bar(positions, correct, width=0.9, color="tab:green", label="correct")
        axes.bar(positions, wrong, width=0.9, bottom=correct, color="tab:red", label="incorrect")
        later = sum(1 for t, _ in answered if t > cap)
        beyond = f", {later} after turn {cap} not shown" if later else ""
        axes.set_title(f"{model}\n{len(answered)} submitted{beyond}", fontsize=9)
        axes.set_xlim(0.5, cap + 0.5)
        axes.xaxis.get_major_locator().set_params(integer=True)
        if index % columns == 0:
            axes.set_ylabel("episodes")
        if index >= len(models) - columns:
            axes.set_xlabel(f"turn of the answer (1–{cap}, the run's --max-turns)")
    axes_grid.flat[0].legend(fontsize=8)
    caps = sorted({limits.get(model, _TURN_CAP) for model in models})
    figure.suptitle(f"Answered episodes by the turn of their answer (turns 1–{'/'.join(map(str, caps))})")
    figure.tight_layout()
    save_figure(figure, path)
