"""The report's section of FinDocMRE's overall score (`type_metrics.py`), per type and overall, on 0-100."""

from __future__ import annotations

from harness.analysis.summary import Cell
from harness.analysis.type_metrics import overall, type_metrics
from harness.core.safe_text import markdown_cell
from harness.records.results import ResultRow


def overall_score(rows: list[ResultRow]) -> float | None:
    """The overall score on 0-100 (`type_metrics.overall`); None without typed rows."""
    value = overall(rows)
    return None if value is None else 100 * value


def overall_section(table: dict[tuple[str, str], Cell]) -> list[str]:
    """Only when some episode was scored: per type its metric, and the overall score."""
    scored = {key: cell for key, cell in table.items() if any(row.score_range for row in cell.rows)}
    if not scored:
        return []
    types = sorted({name for cell in scored.values() for name in type_metrics(cell.rows)})
    lines = [
        "## Overall score over task types (accuracy for objective types, mean score ×100/range for scored ones; "
        "overall = mean over types, as FinDocMRE)",
        "",
        "| model | domain | " + " | ".join(map(markdown_cell, types)) + " | overall score |",
        "|---|---|" + "---|" * (len(types) + 1),
    ]
    for (model, domain), cell in scored.items():
        metrics = type_metrics(cell.rows)
        shown = [
            f"{100 * metrics[t][1]:.1f} ({metrics[t][0]}, n={metrics[t][2]})" if t in metrics else "–" for t in types
        ]
        overall = overall_score(cell.rows)
        lines.append(
            f"| {markdown_cell(model)} | {domain} | "
            + " | ".join(shown)
            + f" | {0.0 if overall is None else overall:.1f} |"
        )
    return [*lines, ""]
