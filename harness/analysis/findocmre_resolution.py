"""The FinDocMRE paper's Figure 7 (Appendix C.3): accuracy against the resolution the pages were sent at, one line
per model and input, from runs at several resolutions. Each run's resolution is read from its own record (run.yaml's
`zero_shot.page_dpi`: its collection's pages, built at that DPI), never from its label; runs at different
resolutions need labels of their own (`--label`), as any two runs whose protocols differ. The accuracy is over the
objective questions, as the paper's (and Figure 6's)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt

from harness.analysis.figure_style import model_colours, save_figure
from harness.analysis.findocmre_scores import OPEN, TYPES
from harness.analysis.paper_table import PaperTable, paper_latex_table
from harness.analysis.runs import ModelRow, PageResolution

__all__ = ["accuracy_by_dpi", "dpi_figure"]


def accuracy_by_dpi(
    rows: list[ModelRow], resolutions: dict[str, PageResolution]
) -> dict[str, dict[int, tuple[float, int]]]:
    """`model (input)` -> DPI (ascending) -> (accuracy % over its objective questions, their count), for the lines
    with runs at two or more resolutions; runs of one line at one resolution are pooled."""
    pooled: dict[str, dict[int, list[bool]]] = {}
    for entry in rows:
        run = resolutions.get(entry.model)
        if run is None or entry.row.task_type not in TYPES or entry.row.task_type == OPEN:
            continue
        pooled.setdefault(run.series, {}).setdefault(run.dpi, []).append(entry.row.is_correct())
    return {
        line: {dpi: (100 * sum(marks) / len(marks), len(marks)) for dpi, marks in sorted(by_dpi.items())}
        for line, by_dpi in sorted(pooled.items())
        if len(by_dpi) > 1
    }


def dpi_figure(
    rows: list[ModelRow], resolutions: dict[str, PageResolution], out: Path
) -> tuple[str, PaperTable | None]:
    """findocmre_dpi.png (and .pdf), its Markdown and its table (accuracy % per line and DPI, the question count in
    brackets); ('', None) when no model and input ran at two resolutions."""
    data = accuracy_by_dpi(rows, resolutions)
    if not data:
        return "", None
    dpis = sorted({dpi for by_dpi in data.values() for dpi in by_dpi})
    colours = model_colours(list(data))
    figure, axes = plt.subplots(figsize=(6.4, 3.6))
    for line, by_dpi in data.items():
        axes.plot(
            list(by_dpi), [accuracy for accuracy, _ in by_dpi.values()], marker="o", label=line, color=colours[line]
        )
    axes.set_xticks(dpis, [str(dpi) for dpi in dpis])
    axes.set_xlabel("page resolution (DPI)")
    axes.set_ylabel("accuracy (%), objective questions")
    axes.set_ylim(0, 100)
    axes.set_title("Accuracy against resolution (the paper's Figure 7)")
    axes.legend(fontsize="small")
    save_figure(figure, out / "findocmre_dpi.png")
    body = [
        [line, *(f"{by_dpi[dpi][0]:.2f} ({by_dpi[dpi][1]})" if dpi in by_dpi else "–" for dpi in dpis)]
        for line, by_dpi in data.items()
    ]
    table = PaperTable(
        "### Accuracy (%) against resolution (Figure 7; objective questions, their count in brackets)",
        ["model (input)", *(f"{dpi} DPI" for dpi in dpis)],
        body,
        "figure7",
    )
    (out / "findocmre_figure7.tex").write_text(paper_latex_table(table.header, table.body), encoding="utf-8")
    markdown = "### Accuracy against resolution (Figure 7)\n\n![accuracy against resolution](findocmre_dpi.png)\n\n"
    return markdown, table
