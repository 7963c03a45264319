"""A task set's counts as FinDocMRE's paper gives its own (`tasks stats`): Table 2 (questions and source documents,
each by language; questions by type), Section 3.4's charts per question (the share over several charts) and
reasoning-trace lengths (characters for Chinese, words for English), the documents' page counts, and Figure 3
(questions by financial domain and by reasoning type). Markdown and LaTeX tables; the figure as PNG and PDF."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from statistics import mean

import matplotlib.pyplot as plt

from harness.analysis.figure_style import save_figure
from harness.analysis.paper_table import PaperTable, paper_latex_table

__all__ = ["DatasetItem", "count_table", "counts_figure", "distribution_table", "write_counts"]

PAPER_TYPES = {
    "single_choice": "Single Choice",
    "multiple_choice": "Multiple Choice",
    "numeric_exact": "Numerical Precise",
    "numeric_approx": "Numerical Approximate",
    "open_ended": "Open Ended",
}
"""Our type names -> Table 2's."""
_LANGUAGES = {"zh": "Chinese", "en": "English"}


@dataclass(frozen=True)
class DatasetItem:
    """What the counts read of one task."""

    type: str | None
    language: str | None
    domain: str | None
    """Its financial domain."""
    reasoning: str | None
    charts: int
    """How many charts it is about."""
    document: str
    pages: int | None
    """Its document's page count, where the import read it."""
    trace: str | None
    """Its reasoning trace, joined, where the item has one."""


def count_table(items: list[DatasetItem]) -> PaperTable:
    """Table 2's rows and Section 3.4's figures: a category and its count (or mean) per line."""
    body: list[list[str]] = [["Questions (QA pairs)", ""], ["Total questions", f"{len(items):,}"]]
    body += _by(Counter(_language(item.language) for item in items))
    documents = {item.document: item for item in items}
    body += [["Source documents (PDFs)", ""], ["Total PDFs", f"{len(documents):,}"]]
    body += _by(Counter(_language(item.language) for item in documents.values()))
    body += [["Question types", ""]]
    types = Counter(str(item.type) for item in items)
    order = [*PAPER_TYPES, *sorted(set(types) - set(PAPER_TYPES))]
    body += [[PAPER_TYPES.get(name, name), f"{types[name]:,}"] for name in order if types[name]]
    body += [["Charts", ""], ["Mean charts per question", f"{mean(item.charts for item in items):.2f}"]]
    several = sum(item.charts > 1 for item in items)
    body += [["Questions over several charts", f"{several:,} ({100 * several / len(items):.1f}%)"]]
    pages = [item.pages for item in documents.values() if item.pages]
    if pages:
        body += [
            ["Pages", ""],
            ["Mean pages per PDF", f"{mean(pages):.1f}"],
            ["Most pages of a PDF", f"{max(pages):,}"],
        ]
    traces = _trace_lengths(items)
    if traces:
        body += [["Reasoning traces", ""], *traces]
    return PaperTable("## The dataset (the paper's Table 2 and Section 3.4)", ["Category", "Count"], body, "table2")


def _by(counts: Counter[str]) -> list[list[str]]:
    return [[f"– {name}", f"{count:,}"] for name, count in sorted(counts.items(), key=lambda pair: (-pair[1], pair[0]))]


def _language(code: str | None) -> str:
    return _LANGUAGES.get(code or "", code or "unknown")


def _trace_lengths(items: list[DatasetItem]) -> list[list[str]]:
    """Mean trace length: characters for Chinese items (spaces left out), words for the others, as the paper's."""
    chinese = [len("".join(item.trace.split())) for item in items if item.trace and item.language == "zh"]
    others = [len(item.trace.split()) for item in items if item.trace and item.language != "zh"]
    lines = []
    if chinese:
        lines.append(["Mean trace length, Chinese (characters)", f"{mean(chinese):.0f}"])
    if others:
        lines.append(["Mean trace length, other languages (words)", f"{mean(others):.0f}"])
    return lines


def distribution_table(items: list[DatasetItem]) -> PaperTable:
    """Figure 3's numbers: questions by financial domain, then by reasoning type, each with its share."""
    body: list[list[str]] = []
    for heading, values in (
        ("Financial domain", [i.domain for i in items]),
        ("Reasoning type", [i.reasoning for i in items]),
    ):
        body.append([heading, "", ""])
        for name, count in sorted(Counter(v or "unknown" for v in values).items(), key=lambda p: (-p[1], p[0])):
            body.append([name, f"{count:,}", f"{100 * count / len(items):.1f}%"])
    return PaperTable(
        "## Questions by domain and reasoning type (the paper's Figure 3)", ["", "Questions", "Share"], body, "figure3"
    )


def counts_figure(items: list[DatasetItem], out: Path) -> None:
    """findocmre_figure3.png (and .pdf): questions by financial domain and by reasoning type, one panel each."""
    figure, panels = plt.subplots(1, 2, figsize=(11, 4.2))
    for axes, (title, values) in zip(
        panels,
        (("by financial domain", [i.domain for i in items]), ("by reasoning type", [i.reasoning for i in items])),
        strict=True,
    ):
        counts = sorted(Counter(v or "unknown" for v in values).items(), key=lambda p: (-p[1], p[0]))
        axes.barh([name for name, _ in counts][::-1], [count for _, count in counts][::-1])
        axes.set_xlabel("questions")
        axes.set_title(title)
    figure.suptitle(f"{len(items):,} questions (the paper's Figure 3)")
    save_figure(figure, out / "findocmre_figure3.png")


def write_counts(items: list[DatasetItem], out: Path) -> str:
    """The tables as Markdown (returned, and written as OUT/dataset.md), each also as LaTeX in OUT, and the figure."""
    out.mkdir(parents=True, exist_ok=True)
    tables = [count_table(items), distribution_table(items)]
    markdown = "\n".join(line for table in tables for line in table.markdown())
    markdown += "\n![questions by domain and reasoning type](findocmre_figure3.png)\n"
    for table in tables:
        (out / f"findocmre_{table.file}.tex").write_text(paper_latex_table(table.header, table.body), encoding="utf-8")
    counts_figure(items, out)
    (out / "dataset.md").write_text(markdown, encoding="utf-8")
    return markdown
