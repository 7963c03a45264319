"""XLSX and XLS: every sheet with a value, as a Markdown table under `## <sheet name>`. Values are shown as
the spreadsheet displays them (number formats kept; a formula's saved value, else the formula). A merged
cell's value fills its whole range; leading title rows (one value across the sheet) become lines above
the table, and a header row with cells merged across columns is joined with the row under it (`Revenue`
over `2022`, `2023` -> `Revenue 2022`, `Revenue 2023`)."""

from __future__ import annotations

import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from harness.collection.numformat import display
from harness.collection.tables import drop_empty, markdown_table

_MAX_TITLE_ROWS = 5


class SpreadsheetError(Exception):
    """A workbook that cannot be read; the message says why."""


@dataclass
class Sheet:
    name: str
    grid: list[list[str]]
    """Displayed values, merged ranges already filled with their top-left value."""
    merges: list[tuple[int, int, int, int]] = field(default_factory=list)
    """Merged ranges as (first row, last row + 1, first column, last column + 1), 0-based."""


def xlsx_sheets(path: Path) -> list[Sheet]:
    import openpyxl

    try:
        # data_only: a formula shows its last computed value, as in the spreadsheet program
        workbook = openpyxl.load_workbook(path, data_only=True)
    except Exception as error:
        raise SpreadsheetError(f"corrupt or unreadable workbook: {type(error).__name__}: {error}") from None
    # A library that writes a formula saves no computed value beside it: show the formula itself then.
    formulas = openpyxl.load_workbook(path, data_only=False) if _has_formulas(path) else None
    sheets = []
    for sheet in workbook.worksheets:
        grid = [[display(cell.value, cell.number_format) for cell in row] for row in sheet.iter_rows()]
        if formulas is not None:
            _show_uncomputed_formulas(grid, formulas[sheet.title])
        merges = [(m.min_row - 1, m.max_row, m.min_col - 1, m.max_col) for m in sheet.merged_cells.ranges]
        sheets.append(_filled(Sheet(sheet.title, grid, merges)))
    return sheets


def _has_formulas(path: Path) -> bool:
    with zipfile.ZipFile(path) as package:
        names = [name for name in package.namelist() if name.startswith("xl/worksheets/") and name.endswith(".xml")]
        return any(b"<f" in package.read(name) for name in names)


def _show_uncomputed_formulas(grid: list[list[str]], sheet: object) -> None:
    for row_index, row in enumerate(grid):
        for column_index, text in enumerate(row):
            if text:
                continue
            value = sheet.cell(row_index + 1, column_index + 1).value
            if isinstance(value, str) and value.startswith("="):
                row[column_index] = value


def xls_sheets(path: Path) -> list[Sheet]:
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
        sheets.append(_filled(Sheet(sheet.name, grid, list(sheet.merged_cells))))
    return sheets


def _filled(sheet: Sheet) -> Sheet:
    grid = sheet.grid
    for row_low, row_high, column_low, column_high in sheet.merges:
        if row_low >= len(grid) or column_low >= len(grid[row_low]):
            continue
        top_left = grid[row_low][column_low]
        for row in range(row_low, min(row_high, len(grid))):
            for column in range(column_low, min(column_high, len(grid[row]))):
                grid[row][column] = top_left
    return sheet


def _xls_cell(book: object, sheet: object, row: int, column: int) -> str:
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


def sheet_markdown(sheet: Sheet) -> str:
    """Title lines, then one table; empty for a sheet without values."""
    grid = sheet.grid
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


def _spans_columns(sheet: Sheet, row: int) -> bool:
    """The row holds a cell merged across columns (and not down into the next row)."""
    return any(low == row and high == row + 1 and right - left > 1 for low, high, left, right in sheet.merges)


def _joined_header(top: list[str], bottom: list[str]) -> list[str]:
    pairs = zip(top, bottom, strict=True)  # rows of one grid: same width
    return [f"{upper} {lower}".strip() if lower != upper else upper for upper, lower in pairs]


def sheets_markdown(sheets: list[Sheet]) -> tuple[str, int]:
    """The Markdown of the sheets that hold anything, and how many those are."""
    parts = [f"## {sheet.name}\n\n{text}" for sheet in sheets if (text := sheet_markdown(sheet))]
    return "\n".join(parts), len(parts)
