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


@dataclass(frozen=True)
class RetrievedCoverage:
    """How many of a task's gold facts in words (MuDABench's `source_answer`) the retrieved chunks hold, by two
    judges (MuDABench eq. 3-5): the correct side counts the facts found (C_i = correct / total), the incorrect side
    the facts wrong or missing (E_i = errors / total), and the conservative count is min(correct, total - errors),
    so that covered / total = min(C_i, 1 - E_i)."""

    correct: int
    errors: int
    total: int
    covered: int
    failed: int = 0
    """Sides whose judgment failed: a failed correct side counts 0 found, a failed incorrect side every fact an
    error (MuDABench's rescue defaults)."""

    @property
    def complete(self) -> bool:
        """Every fact covered (P_i = 1): with a correct answer, the episode counts in Acc_full (eq. 9)."""
        return self.covered == self.total

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


def conservative_coverage(correct: int, errors: int, total: int, failed: int = 0) -> RetrievedCoverage:
    """The two sides' counts, each clamped to [0, TOTAL] as MuDABench's evaluator clamps them, and their
    conservative minimum."""
    correct, errors = min(max(0, correct), total), min(max(0, errors), total)
    return RetrievedCoverage(correct, errors, total, min(correct, total - errors), failed)
