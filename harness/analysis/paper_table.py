"""A table of a benchmark's paper as the report writes it: under its heading in report.md, and as LaTeX for the
paper's source (FinDocMRE's tables and figures' tables, MuDABench's, the dataset counts)."""

from __future__ import annotations

from dataclasses import dataclass

from harness.analysis.accuracy_table import latex_escape
from harness.core.safe_text import markdown_grid


@dataclass(frozen=True)
class PaperTable:
    """One of the paper's tables: its heading in report.md, its header and rows, and its LaTeX file's stem."""

    title: str
    header: list[str]
    body: list[list[str]]
    file: str

    def markdown(self) -> list[str]:
        return [self.title, "", *markdown_grid(self.header, self.body), ""]


def paper_latex_table(header: list[str], body: list[list[str]]) -> str:
    """A tabular for the paper's LaTeX source: the first column left, the others right, text escaped."""
    lines = [r"\begin{tabular}{l" + "r" * (len(header) - 1) + "}", r"\hline"]
    lines.append(" & ".join(map(latex_cell, header)) + r" \\")
    lines.append(r"\hline")
    lines += [" & ".join(map(latex_cell, row)) + r" \\" for row in body]
    return "\n".join([*lines, r"\hline", r"\end{tabular}", ""])


def latex_cell(text: str) -> str:
    """TEXT escaped as the report's accuracy table escapes it, with the paper's en dash for a missing value."""
    return latex_escape(text).replace("–", "--")
