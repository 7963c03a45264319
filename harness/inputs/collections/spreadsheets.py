"""XLSX and XLS: every sheet with a value, as a Markdown table under `## <sheet name>`. Values are shown as
the spreadsheet displays them (number formats kept; a formula's saved value, else the formula, noted). A merged
cell's value fills its whole range; leading title rows (one value across the sheet) become lines above
the table, and a header row with cells merged across columns is joined with the row under it (`Revenue`
over `2022`, `2023` -> `Revenue 2022`, `Revenue 2023`)."""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from harness.inputs.collections.conversion import output_too_large
from harness.inputs.collections.numformat import display
from harness.inputs.collections.tables import drop_empty, markdown_table

_MAX_TITLE_ROWS = 5
_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_RELATIONSHIPS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


class SpreadsheetError(Exception):
    """A workbook that cannot be read; the message says why."""


@dataclass
class _Sheet:
    name: str
    grid: list[list[str]]
    """Displayed values, merged ranges already filled with their top-left value."""
    merges: list[tuple[int, int, int, int]] = field(default_factory=list)
    """Merged ranges as (first row, last row + 1, first column, last column + 1), 0-based."""
    unsaved_formulas: list[str] = field(default_factory=list)
    """Cells (`D4`) whose formula has no saved value (no spreadsheet program computed it): shown as written."""


def unsaved_formula_notes(sheets: list[_Sheet]) -> list[str]:
    """The manifest's and the console's word on formulas shown as written, one note per sheet."""
    return [
        f"sheet {sheet.name!r}: {len(sheet.unsaved_formulas)} formulas have no saved value (never computed by a "
        f"spreadsheet program) and are shown as written: {', '.join(sheet.unsaved_formulas[:10])}"
        + (", ..." if len(sheet.unsaved_formulas) > 10 else "")
        for sheet in sheets
        if sheet.unsaved_formulas
    ]


def xlsx_sheets(path: Path) -> list[_Sheet]:
    """Read-only mode: memory stays flat on a large workbook (the normal mode takes ~150x the file)."""
    import openpyxl

    workbooks = []
    try:
        merges, has_formulas = _package_facts(path)
        # data_only: a formula shows its last computed value, as in the spreadsheet program
        workbooks.append(openpyxl.load_workbook(path, data_only=True, read_only=True))
        # a library that writes a formula saves no computed value beside it: then the formula is shown
        workbooks.append(openpyxl.load_workbook(path, read_only=True) if has_formulas else None)
        values, formulas = workbooks
        sheets = []
        for sheet in values.worksheets:
            grid, unsaved = _xlsx_grid(sheet, formulas[sheet.title] if formulas else None)
            sheets.append(_filled(_Sheet(sheet.title, grid, merges.get(sheet.title, []), unsaved)))
        return sheets
    except Exception as error:
        raise SpreadsheetError(f"corrupt or unreadable workbook: {type(error).__name__}: {error}") from None
    finally:
        for workbook in workbooks:
            if workbook is not None:
                workbook.close()


def _xlsx_grid(sheet: Any, formulas: Any) -> tuple[list[list[str]], list[str]]:
    """The displayed values, and the cells whose formula had no saved value (then shown as the formula)."""
    from openpyxl.utils.cell import get_column_letter

    sheet.reset_dimensions()  # the saved size can be wrong: read to the last cell
    grid = [[display(cell.value, getattr(cell, "number_format", None)) for cell in row] for row in sheet.iter_rows()]
    unsaved = []
    if formulas is not None:
        formulas.reset_dimensions()
        for number, (row, formula_row) in enumerate(zip(grid, formulas.iter_rows(values_only=True), strict=False)):
            for index, value in enumerate(formula_row[: len(row)]):
                if not row[index] and isinstance(value, str) and value.startswith("="):
                    row[index] = value
                    unsaved.append(f"{get_column_letter(index + 1)}{number + 1}")
    width = max((len(row) for row in grid), default=0)
    return [row + [""] * (width - len(row)) for row in grid], unsaved


def _package_facts(path: Path) -> tuple[dict[str, list[tuple[int, int, int, int]]], bool]:
    """Each sheet's merged ranges (read-only mode does not give them) and whether any cell has a formula."""
    from openpyxl.utils.cell import range_boundaries

    with zipfile.ZipFile(path) as package:
        workbook = ElementTree.fromstring(package.read("xl/workbook.xml"))
        relations = ElementTree.fromstring(package.read("xl/_rels/workbook.xml.rels"))
        targets = {relation.get("Id"): relation.get("Target", "") for relation in relations}
        merges: dict[str, list[tuple[int, int, int, int]]] = {}
        has_formulas = False
        for sheet in workbook.iter(f"{{{_MAIN}}}sheet"):
            target = targets.get(sheet.get(f"{{{_RELATIONSHIPS}}}id"), "")
            part = target.lstrip("/") if target.startswith("/") else f"xl/{target}"
            if part not in package.namelist():
                continue
            xml = package.read(part)
            has_formulas = has_formulas or re.search(rb"<(\w+:)?f[ >/]", xml) is not None
            ranges = [range_boundaries(ref.decode()) for ref in re.findall(rb'<(?:\w+:)?mergeCell ref="([^"]+)"', xml)]
            merges[sheet.get("name", "")] = [(top - 1, bottom, left - 1, right) for left, top, right, bottom in ranges]
    return merges, has_formulas


def xls_sheets(path: Path) -> list[_Sheet]:
    import xlrd

    try:
        book = xlrd.open_workbook(str(path), formatting_info=True)
    except Exception as error:
        reason = str(error)
        if "encrypted" in reason.lower():
            raise SpreadsheetError("encrypted workbook (password-protected)") from None
        raise SpreadsheetError(f"corrupt or unreadable workbook: {type(error).__name__}: {reason}") from None
    sheets = []
    for sheet in book.sheets():
        grid = [[_xls_cell(book, sheet, row, column) for column in range(sheet.ncols)] for row in range(sheet.nrows)]
        sheets.append(_filled(_Sheet(sheet.name, grid, list(sheet.merged_cells))))
    return sheets


def _filled(sheet: _Sheet) -> _Sheet:
    grid = sheet.grid
    for row_low, row_high, column_low, column_high in sheet.merges:
        if row_low >= len(grid) or column_low >= len(grid[row_low]):
            continue
        top_left = grid[row_low][column_low]
        for row in range(row_low, min(row_high, len(grid))):
            for column in range(column_low, min(column_high, len(grid[row]))):
                grid[row][column] = top_left
    return sheet


def _xls_cell(book: Any, sheet: Any, row: int, column: int) -> str:
    import xlrd

    cell = sheet.cell(row, column)
    if cell.ctype in (xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_BLANK):
        return ""
    if cell.ctype == xlrd.XL_CELL_ERROR:
        return xlrd.error_text_from_code.get(cell.value, "#ERROR")
    if cell.ctype == xlrd.XL_CELL_BOOLEAN:
        return display(bool(cell.value), None)
    if cell.ctype == xlrd.XL_CELL_DATE:
        return display(xlrd.xldate_as_datetime(cell.value, book.datemode), None)
    number_format = None
    if cell.ctype == xlrd.XL_CELL_NUMBER:
        xf = book.xf_list[cell.xf_index]
        number_format = book.format_map[xf.format_key].format_str if xf.format_key in book.format_map else None
    return display(cell.value, number_format)


def _sheet_markdown(sheet: _Sheet, max_bytes: int | None = None) -> str:
    """Title lines, then one table; empty for a sheet without values. A sheet whose cells alone hold more than
    MAX_BYTES is refused before its table is made (a value merged over a million cells fills each)."""
    grid = sheet.grid
    if max_bytes is not None and sum(len(cell) for row in grid for cell in row) > max_bytes:
        raise output_too_large(max_bytes)
    rows = [index for index, row in enumerate(grid) if any(cell.strip() for cell in row)]
    if not rows:
        return ""
    width = len(drop_empty([grid[index] for index in rows])[0])
    titles: list[str] = []
    while width > 1 and len(rows) > 1 and len(titles) < _MAX_TITLE_ROWS and _one_value(grid[rows[0]]):
        titles.append(next(cell.strip() for cell in grid[rows[0]] if cell.strip()))
        rows.pop(0)
    body = [grid[index] for index in rows]
    if len(rows) > 1 and rows[1] == rows[0] + 1 and _spans_columns(sheet, rows[0]):
        body = [_joined_header(grid[rows[0]], grid[rows[1]]), *body[2:]]
    table = markdown_table(drop_empty(body))
    return "\n\n".join([*titles, table]) if titles else table


def _one_value(row: list[str]) -> bool:
    return len({cell.strip() for cell in row if cell.strip()}) == 1


def _spans_columns(sheet: _Sheet, row: int) -> bool:
    """The row holds a cell merged across columns (and not down into the next row)."""
    return any(low == row and high == row + 1 and right - left > 1 for low, high, left, right in sheet.merges)


def _joined_header(top: list[str], bottom: list[str]) -> list[str]:
    pairs = zip(top, bottom, strict=True)  # rows of one grid: same width
    return [f"{upper} {lower}".strip() if lower != upper else upper for upper, lower in pairs]


def sheets_markdown(sheets: list[_Sheet], max_bytes: int | None = None) -> tuple[str, int]:
    """The Markdown of the sheets that hold anything, and how many those are; refused past MAX_BYTES."""
    parts: list[str] = []
    for sheet in sheets:
        budget = None if max_bytes is None else max_bytes - sum(map(len, parts))
        if text := _sheet_markdown(sheet, budget):
            parts.append(f"## {sheet.name}\n\n{text}")
    return "\n".join(parts), len(parts)
