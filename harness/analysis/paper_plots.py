"""The paper's figures from a run, drawn for many models: the residual heatmap, the failure-mode radar and the
submission-turn distribution (matplotlib, Agg)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator

from harness.analysis.accuracy_table import Accuracies
from harness.analysis.figure_style import count_axis, mode_label, model_colours, save_figure
from harness.analysis.summary import ALL

_TURNS_SHOWN = 5
"""The turn axis runs to the latest answer, and at least this far (answers all at turn 1 are not a sliver)."""
RADAR_FROM = 3
"""Models from which the failure-mode chart is a radar; fewer are grouped bars (one polygon is hard to read)."""


def residual_heatmap(table: Accuracies, models: list[str], tiers: list[list[str]], path: Path) -> None:
    """Each cell: the model's domain accuracy minus its overall accuracy (large, pp) over the domain accuracy
    (small); diverging colours centred on zero; a rule between tiers."""
    domains = sorted({d for (m, d) in table if d != ALL and m in models})
    residuals = [[_residual(table, model, domain) for domain in domains] for model in models]
    limit = max((abs(v) for row in residuals for v in row if v is not None), default=1.0) or 1.0
    height = 2.4 + 0.62 * len(models)
    figure, axes = plt.subplots(figsize=(3.5 + 1.05 * len(domains), height))
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
    axes.set_title("Per-domain residual (pp) vs each model's overall accuracy\n(small: the domain's accuracy)")
    # below the cells, across: a side bar's label outgrows a one-model figure's height and runs into the title
    figure.colorbar(
        image,
        ax=axes,
        label="domain accuracy − overall (pp)",
        orientation="horizontal",
        location="bottom",
        shrink=0.6,
        aspect=30,
        pad=min(0.3, 0.9 / height),  # about 0.7 in under the cells: below the slanted names
    )
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
    colours = model_colours([model for group in panels for model in group])
    for axes, group, name in zip(axes_list[0], panels, names, strict=True):
        top = max((shares[m][mode] for m in group for mode in modes), default=0.0)
        scale = min(1.0, max(0.05, math.ceil(top * 1.1 * 20) / 20))  # a multiple of 5%, at most 100%
        for model in group:
            values = [shares[model][mode] for mode in modes]
            closed = ([*angles, angles[0]], [*values, values[0]])
            axes.plot(*closed, linewidth=1.8, label=model, color=colours[model])
            axes.fill(*closed, alpha=0.08, color=colours[model])
        axes.set_xticks(angles, [mode_label(mode).replace(" ", "\n") for mode in modes], fontsize=9)
        axes.set_ylim(0, scale)
        ticks = [t for t in MaxNLocator(nbins=4, steps=[1, 2, 2.5, 5, 10]).tick_values(0, scale) if 0 < t <= scale]
        axes.set_yticks(ticks, [f"{100 * t:.0f}%" for t in ticks], fontsize=7)
        axes.set_title(f"{name} (radial scale 0–{100 * scale:.0f}%)", pad=24)
        if top == 0:
            axes.text(0, 0, "no question carries a mode", ha="center", va="center", fontsize=10, color="grey")
        axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2, fontsize=8, frameon=False)
    figure.suptitle("Share of questions implicated in each failure mode (a question may carry several)", y=1.03)
    save_figure(figure, path)


def failure_bars(shares: Mapping[str, Mapping[str, float]], modes: list[str], models: list[str], path: Path) -> None:
    """The radar's figures for fewer than RADAR_FROM models: per mode one horizontal bar per model (mode names
    read across), every bar's share written at its end, 0% too."""
    height = 0.8 / max(len(models), 1)
    figure, axes = plt.subplots(figsize=(7.5, 1.6 + 0.3 * len(modes) * max(len(models), 2)), layout="constrained")
    colours = model_colours(models)
    for index, model in enumerate(models):
        values = [100 * shares[model][mode] for mode in modes]
        bars = axes.barh([p + index * height for p in range(len(modes))], values, height, color=colours[model])
        bars.set_label(model)
        axes.bar_label(bars, [f"{value:.0f}%" for value in values], fontsize=7, padding=2)
    axes.set_yticks([p + height * (len(models) - 1) / 2 for p in range(len(modes))], [mode_label(m) for m in modes])
    axes.invert_yaxis()
    top = max((100 * v for s in shares.values() for v in s.values()), default=0.0)
    axes.set_xlim(0, max(5.0, min(100.0, 1.15 * top)) + 6)  # room for the last bar's label
    axes.xaxis.set_major_locator(MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10]))
    axes.set_xlabel("questions implicated (%)")
    axes.set_title("Share of questions implicated in each failure mode\n(a question may carry several)")
    axes.spines[["top", "right"]].set_visible(False)
    figure.legend(loc="outside lower center", ncol=2, fontsize=8, frameon=False)
    save_figure(figure, path)


def turn_distribution(
    turns: Mapping[str, list[tuple[int, bool]]], models: list[str], path: Path, limits: Mapping[str, int]
) -> None:
    """One panel per model: its answered episodes by the turn of the answer, correct and incorrect stacked; the
    axis runs from turn 1 to the latest answer of any model (at least _TURNS_SHOWN), the turn budget (LIMITS:
    each model's `--max-turns`) named under it; counts in whole numbers."""
    columns = min(4, max(1, len(models)))
    rows = math.ceil(len(models) / columns)
    figure, axes_grid = plt.subplots(rows, columns, figsize=(4.2 * columns, 0.4 + 2.9 * rows), squeeze=False)
    last = max((t for model in models for t, _ in turns.get(model, [])), default=1)
    positions = list(range(1, max(last, _TURNS_SHOWN) + 1))  # one range for every panel: they compare at a glance
    for index, axes in enumerate(axes_grid.flat):
        if index >= len(models):
            axes.set_visible(False)
            continue
        model = models[index]
        answered = turns.get(model, [])
        correct = [sum(1 for t, ok in answered if ok and t == turn) for turn in positions]
        wrong = [sum(1 for t, ok in answered if not ok and t == turn) for turn in positions]
        axes.bar(positions, correct, width=0.8, color="tab:green", label="correct")
        axes.bar(positions, wrong, width=0.8, bottom=correct, color="tab:red", label="incorrect")
        axes.set_title(f"{model}\n{len(answered)} submitted", fontsize=9)
        axes.set_xlim(0.4, positions[-1] + 0.6)
        axes.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
        count_axis(axes, "y", max((c + w for c, w in zip(correct, wrong, strict=True)), default=0))
        if not answered:
            axes.text(0.5, 0.5, "no answered episode", transform=axes.transAxes, ha="center", color="grey")
        if index % columns == 0:
            axes.set_ylabel("episodes")
        budget = limits.get(model)
        axes.set_xlabel(f"turn of the answer ({'budget unknown' if budget is None else f'budget {budget} turns'})")
    axes_grid.flat[0].legend(fontsize=8)
    figure.suptitle("Answered episodes by the turn of their answer")
    figure.tight_layout()
    save_figure(figure, path)
