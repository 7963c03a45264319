"""Markdown tables from rows of text cells: every row kept (no truncation), pipes escaped, line breaks as
`<br>`, short rows padded to the widest."""

from __future__ import annotations

from collections.abc import Iterable


def _cell_text(value: str) -> str:
    return value.replace("\\", "\\\\").replace("|", "\\|").replace("\r\n", "\n").replace("\n", "<br>").strip()


def markdown_table(rows: Iterable[list[str]]) -> str:
    """The first row is the header; an empty header cell is named by its column (`column 3`)."""
    rows = [[_cell_text(cell) for cell in row] for row in rows]
    if not rows:
        return ""
    width = max(len(row) for row in rows)
    rows = [row + [""] * (width - len(row)) for row in rows]
    header = [cell or f"column {index}" for index, cell in enumerate(rows[0], start=1)]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows[1:]]
    return "\n".join(lines) + "\n"


def drop_empty(rows: list[list[str]]) -> list[list[str]]:
    """Without the rows and columns that hold no text at all."""
    rows = [row for row in rows if any(cell.strip() for cell in row)]
    if not rows:
        return []
    width = max(len(row) for row in rows)
    rows = [row + [""] * (width - len(row)) for row in rows]
    keep = [column for column in range(width) if any(row[column].strip() for row in rows)]
    return [[row[column] for column in keep] for row in rows]
