"""The paper's accuracy table: models (best first) × domains and overall, the best of each column in bold and
the second underlined, as Markdown and as a LaTeX `tabular`."""

from __future__ import annotations

from collections.abc import Mapping

from harness.analysis.summary import ALL
from harness.core.safe_text import markdown_cell

Accuracies = Mapping[tuple[str, str], float]
"""(model, domain or `all`) -> accuracy as a share."""


def ranks(values: dict[str, float]) -> dict[str, int]:
    """Model -> 1 for the best value of the column, 2 for the second (ties share a rank), 0 for the rest."""
    distinct = sorted({round(v, 9) for v in values.values()}, reverse=True)
    return {
        model: (distinct.index(round(v, 9)) + 1 if round(v, 9) in distinct[:2] else 0) for model, v in values.items()
    }


def _columns(table: Accuracies, models: list[str]) -> list[str]:
    return [*sorted({d for (m, d) in table if d != ALL and m in models}), ALL]


def _ranked(table: Accuracies, models: list[str], domain: str) -> dict[str, int]:
    return ranks({m: table[(m, domain)] for m in models if (m, domain) in table})


def _cells(
    table: Accuracies,
    marks: dict[str, dict[str, int]],
    model: str,
    columns: list[str],
    missing: str,
    best_and_second: tuple[str, str],
) -> list[str]:
    """MODEL's accuracy in each column in percent, the best and second of the column put into their formats."""
    cells = []
    for domain in columns:
        if (model, domain) not in table:
            cells.append(missing)
            continue
        text = f"{100 * table[(model, domain)]:.1f}"
        rank = marks[domain].get(model, 0)
        cells.append(best_and_second[rank - 1].format(text) if rank in (1, 2) else text)
    return cells


def markdown_table(table: Accuracies, models: list[str]) -> str:
    """Bold = best of the column, underlined (`<u>`) = second."""
    columns = _columns(table, models)
    marks = {domain: _ranked(table, models, domain) for domain in columns}
    lines = ["| model | " + " | ".join(map(markdown_cell, columns)) + " |", "|---|" + "---:|" * len(columns)]
    for model in models:
        cells = _cells(table, marks, model, columns, "–", ("**{}**", "<u>{}</u>"))
        lines.append(f"| {markdown_cell(model)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def latex_table(table: Accuracies, models: list[str]) -> str:
    """A `tabular` (booktabs rules) to `\\input` into a paper: \\textbf best, \\underline second."""
    columns = _columns(table, models)
    marks = {domain: _ranked(table, models, domain) for domain in columns}
    header = " & ".join(["Model", *(latex_escape(c if c != ALL else "Overall") for c in columns)])
    lines = [f"\\begin{{tabular}}{{l{'r' * len(columns)}}}", "\\toprule", header + " \\\\", "\\midrule"]
    for model in models:
        cells = [
            latex_escape(model),
            *_cells(table, marks, model, columns, "--", ("\\textbf{{{}}}", "\\underline{{{}}}")),
        ]
        lines.append(" & ".join(cells) + " \\\\")
    return "\n".join([*lines, "\\bottomrule", "\\end{tabular}"]) + "\n"


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    """TEXT with LaTeX's special characters escaped (a model's label, a domain's name)."""
    return "".join(_LATEX_SPECIAL.get(character, character) for character in text)
