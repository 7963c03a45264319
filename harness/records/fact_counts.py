"""A task's intermediate facts as an episode covered them: cells, rows and columns (MuDABench's counts)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class FactCounts:
    """How many of a task's gold cells, rows and columns an episode covered, and of how many.

    A row is covered when all its cells are, a column when it is covered in every row that has it (MuDABench's
    row and column accuracy); counts are summed over episodes before dividing (micro over questions).
    """

    cells: int
    cells_total: int
    rows: int
    rows_total: int
    columns: int
    columns_total: int
    failed: int = 0
    """Rows whose judgment failed (no judge gave a readable reply): counted as not covered, in every total."""

    @property
    def complete(self) -> bool:
        """Every row covered: with a correct answer, a *solid* episode."""
        return self.rows == self.rows_total

    def to_dict(self) -> dict[str, int]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FactCounts:
        return cls(**{name: int(data[name]) for name in cls.__dataclass_fields__ if name in data})


def count_covered(rows: list[dict[str, bool]], failed: int = 0) -> FactCounts:
    """Counts from each row's column -> covered (a row without columns is left out), and the rows whose
    judgment failed (already counted as not covered)."""
    rows = [row for row in rows if row]
    columns: dict[str, bool] = {}
    for row in rows:
        for name, covered in row.items():
            columns[name] = columns.get(name, True) and covered
    return FactCounts(
        cells=sum(sum(row.values()) for row in rows),
        cells_total=sum(len(row) for row in rows),
        rows=sum(all(row.values()) for row in rows),
        rows_total=len(rows),
        columns=sum(columns.values()),
        columns_total=len(columns),
        failed=failed,
    )
