"""The FinDocMRE paper's per-type figures of a set of rows (its Section 4.2): each objective type's accuracy, the
open-ended mean score raw and on 0-100, and the Overall Score, their unweighted mean; what its tables
(findocmre_tables.py) and figures (findocmre_figures.py) are made of."""

from __future__ import annotations

from collections.abc import Sequence

from harness.records.results import ResultRow

__all__ = ["OPEN", "TYPES", "raw_score", "table3_cells"]

TYPES = {
    "single_choice": "Single-Ch.",
    "multiple_choice": "Multi-Ch.",
    "numeric_exact": "Num. (Pre.)",
    "numeric_approx": "Num. (App.)",
    "open_ended": "Open-Ended",
}
"""The paper's five types (our task types) and Table 3's column heads, in its order."""
OPEN = "open_ended"


def raw_score(row: ResultRow) -> float:
    """An open-ended row's score; one without a score counts as its range's low end (0)."""
    low = row.score_range[0] if row.score_range else 0
    return float(row.score) if row.score is not None else float(low)


def _range(rows: Sequence[ResultRow]) -> tuple[int, int]:
    ranges = [row.score_range for row in rows if row.score_range]
    return (ranges[0][0], ranges[0][1]) if ranges else (0, 5)


def table3_cells(rows: Sequence[ResultRow]) -> dict[str, float | None]:
    """Type -> accuracy % (objective types) or mean raw score (open-ended), `open_ended_100` (the score on 0-100)
    and `overall` (the mean of the five on 0-100); None for a type without questions."""
    cells: dict[str, float | None] = {}
    metrics: list[float] = []
    for name in TYPES:
        mine = [row for row in rows if row.task_type == name]
        if not mine:
            cells[name] = None
        elif name == OPEN:
            low, high = _range(mine)
            mean = sum(map(raw_score, mine)) / len(mine)
            cells[name], cells["open_ended_100"] = mean, 100 * (mean - low) / (high - low)
            metrics.append(100 * (mean - low) / (high - low))
        else:
            accuracy = 100 * sum(row.is_correct() for row in mine) / len(mine)
            cells[name] = accuracy
            metrics.append(accuracy)
    cells["overall"] = sum(metrics) / len(metrics) if metrics else None
    return cells
