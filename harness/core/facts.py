"""A task's intermediate facts: the per-document values its answer is computed from, as rows of cells.

One row per document and entity/period (MuDABench's per-document gold rows); its cells are the named values
(the columns). Like the gold, facts never enter the sandbox or the prompt: they are what fact coverage
(harness/diagnostics/fact_coverage.py) and the fact judge (harness/diagnostics/fact_judge.py) compare the episode with.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from harness.core.errors import InputError

CellValue = Any
"""A cell's value: any JSON value (null for a fact the source left empty; lists of objects as MuDABench's
`value_shareholder_meeting_events`), floats finite."""


@dataclass(frozen=True)
class FactRow:
    """One gold row: the document it comes from, whom and when it is about, and its cells."""

    document: str
    """The collection file the row's values are read from (as the task's `evidence` names files)."""
    cells: dict[str, CellValue]
    """Column name -> the gold value."""
    entity: str | None = None
    period: str | None = None
    schema: dict[str, str] = field(default_factory=dict)
    """Column name -> what it means (the source's own description), for the fact judge."""
    source: dict[str, Any] = field(default_factory=dict)
    """The source's own description of the row's document (MuDABench: symbol, year, doctype, id, as given),
    for a benchmark's own fact prompt."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "document": self.document,
            "entity": self.entity,
            "period": self.period,
            "cells": dict(self.cells),
            "schema": dict(self.schema),
            "source": dict(self.source),
        }


def parse_facts(raw: Any, where: str) -> tuple[FactRow, ...]:
    """A task line's `facts` (a list of rows), checked; a bad one is an InputError naming the row and field."""
    if not isinstance(raw, list):
        raise InputError(f"{where}: field 'facts': must be a list of rows")
    return tuple(_row(item, f"{where}: field 'facts[{index}]") for index, item in enumerate(raw))


def _row(item: Any, where: str) -> FactRow:
    if not isinstance(item, dict):
        raise InputError(f"{where}': must be a JSON object")
    unknown = sorted(set(item) - {"document", "entity", "period", "cells", "schema", "source"})
    if unknown:
        raise InputError(f"{where}.{unknown[0]}': unknown field")
    document = item.get("document")
    if not isinstance(document, str) or not document.strip():
        raise InputError(f"{where}.document': must be a non-empty string")
    for name in ("entity", "period"):
        if item.get(name) is not None and not isinstance(item[name], str):
            raise InputError(f"{where}.{name}': must be a string")
    cells = item.get("cells")
    if not isinstance(cells, dict) or not cells:
        raise InputError(f"{where}.cells': must be a non-empty object of column -> value")
    for name, value in cells.items():
        if not name.strip():
            raise InputError(f"{where}.cells': a column name is empty")
        if not _is_cell_value(value):
            raise InputError(f"{where}.cells.{name}': must be a JSON value (finite numbers)")
    schema = item.get("schema") or {}
    if not isinstance(schema, dict) or not all(isinstance(text, str) for text in schema.values()):
        raise InputError(f"{where}.schema': must be an object of column -> description")
    source = item.get("source") or {}
    if not isinstance(source, dict) or not all(_is_cell_value(value) for value in source.values()):
        raise InputError(f"{where}.source': must be an object of name -> JSON value")
    return FactRow(document.strip(), dict(cells), item.get("entity"), item.get("period"), dict(schema), dict(source))


def _is_scalar(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, (str, int, bool))


def _is_cell_value(value: Any, depth: int = 0) -> bool:
    """Any JSON value with finite numbers (nested at most 32 deep)."""
    if depth > 32:
        return False
    if isinstance(value, list):
        return all(_is_cell_value(part, depth + 1) for part in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and _is_cell_value(part, depth + 1) for key, part in value.items())
    return _is_scalar(value)


def _cell_names(rows: tuple[FactRow, ...]) -> list[str]:
    """Every column of the rows, in first-seen order."""
    return list(dict.fromkeys(name for row in rows for name in row.cells))
