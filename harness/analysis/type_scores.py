"""The report's overall score over task types, as FinDocMRE defines it: each objective type by its accuracy
(default mode), each scored type (the `score` grader) by its mean score scaled to 0-100, and the overall score
the unweighted mean over the types."""

from __future__ import annotations

from harness.analysis.summary import Cell
from harness.core.safe_text import markdown_cell
from harness.records.results import ResultRow


def _type_metrics(rows: list[ResultRow]) -> dict[str, tuple[str, float, int]]:
    """Type -> (`accuracy` or `score`, its value on 0-100, episodes). A type is scored when any of its rows has
    a score; its episodes without one (no answer, judge error) count as the range's low end."""
    by_type: dict[str, list[ResultRow]] = {}
    for row in rows:
        if row.task_type is not None:
            by_type.setdefault(row.task_type, []).append(row)
    metrics: dict[str, tuple[str, float, int]] = {}
    for name, mine in sorted(by_type.items()):
        ranges = [row.score_range for row in mine if row.score_range is not None]
        if ranges:
            scaled = [_scaled(row.score, row.score_range or ranges[0]) for row in mine]
            metrics[name] = ("score", 100 * sum(scaled) / len(scaled), len(mine))
        else:
            metrics[name] = ("accuracy", 100 * sum(row.is_correct() for row in mine) / len(mine), len(mine))
    return metrics


def _scaled(score: float | None, bounds: list[int]) -> float:
    low, high = bounds
    return 0.0 if score is None else (score - low) / (high - low)


def overall_score(rows: list[ResultRow]) -> float | None:
    """The mean over types of their 0-100 metric; None without typed rows."""
    metrics = _type_metrics(rows)
    return sum(value for _, value, _ in metrics.values()) / len(metrics) if metrics else None


def overall_section(table: dict[tuple[str, str], Cell]) -> list[str]:
    """Only when some episode was scored: per type its metric, and the overall score."""
    scored = {key: cell for key, cell in table.items() if any(row.score_range for row in cell.rows)}
    if not scored:
        return []
    types = sorted({name for cell in scored.values() for name in _type_metrics(cell.rows)})
    lines = [
        "## Overall score over task types (accuracy for objective types, mean score ×100/range for scored ones; "
        "overall = mean over types, as FinDocMRE)",
        "",
        "| model | domain | " + " | ".join(map(markdown_cell, types)) + " | overall score |",
        "|---|---|" + "---|" * (len(types) + 1),
    ]
    for (model, domain), cell in scored.items():
        metrics = _type_metrics(cell.rows)
        shown = [f"{metrics[t][1]:.1f} ({metrics[t][0]}, n={metrics[t][2]})" if t in metrics else "–" for t in types]
        overall = overall_score(cell.rows)
        lines.append(
            f"| {markdown_cell(model)} | {domain} | "
            + " | ".join(shown)
            + f" | {0.0 if overall is None else overall:.1f} |"
        )
    return [*lines, ""]
