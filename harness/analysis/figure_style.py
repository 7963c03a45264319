"""What every figure of a report shares: one colour per model in all of them, count axes in whole numbers
from zero, and the files a figure is saved as (a PNG describing its panels, and a PDF for print)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator

FORMATS = ("png", "pdf")
"""Every figure is written as a PNG (for the Markdown report) and a PDF (vector, for a paper), same name."""


def model_colours(models: Sequence[str]) -> dict[str, Any]:
    """Model -> its colour, by the model's place in the report's order (best first), so a model keeps its colour
    in every figure of the report whatever subset a figure or panel draws; tab10, tab20 beyond ten models."""
    palette = plt.get_cmap("tab10" if len(models) <= 10 else "tab20").colors  # type: ignore[attr-defined]
    return {model: palette[index % len(palette)] for index, model in enumerate(models)}


def count_axis(axes: Any, which: str, top: float) -> None:
    """WHICH ("x" or "y") of AXES counts things: whole-number ticks from 0 to at least 1 (an all-zero chart is
    not a negative, fractional scale), with headroom above TOP for the bars' labels."""
    limit = max(1.0, top * 1.18)
    axis = axes.xaxis if which == "x" else axes.yaxis
    axis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    (axes.set_xlim if which == "x" else axes.set_ylim)(0, limit)


def mode_label(mode: str) -> str:
    """A failure mode as a tick label: `incomplete_inspection` -> `incomplete inspection`."""
    return mode.replace("_", " ")


def save_figure(figure: Any, path: Path) -> None:
    """PATH (a .png) and the same figure beside it as .pdf. The PNG carries what its panels show (titles, axis
    labels, tick labels, legends), read from the figure itself into its `Description` text, so a test or a
    script can check the panels without OCR."""
    figure.savefig(path, dpi=110, bbox_inches="tight", metadata={"Description": json.dumps(describe(figure))})
    for extension in FORMATS[1:]:
        # no creation date: the same figure is the same bytes (reports compare byte for byte, tests' goldens too)
        figure.savefig(path.with_suffix(f".{extension}"), bbox_inches="tight", metadata={"CreationDate": None})
    plt.close(figure)


def describe(figure: Any) -> dict[str, Any]:
    """The figure's title and legend entries (a legend outside the panels) and, per visible panel, its title, axis
    labels and limits, tick labels and legend entries."""
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
                "xlim": [round(float(v), 3) for v in axes.get_xlim()],
                "ylim": [round(float(v), 3) for v in axes.get_ylim()],
                "xticks": [t.get_text() for t in axes.get_xticklabels()],
                "yticks": [t.get_text() for t in axes.get_yticklabels()],
                "legend": [t.get_text() for t in legend.get_texts()] if legend else [],
                "texts": len(axes.texts),
                "lines": len(axes.get_lines()),
            }
        )
    title = figure._suptitle.get_text() if figure._suptitle is not None else ""
    legend = [t.get_text() for figure_legend in figure.legends for t in figure_legend.get_texts()]
    return {"title": title, "legend": legend, "panels": panels}
