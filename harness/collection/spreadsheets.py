"""XLSX and XLS: every sheet with a value, as a Markdown table under `## <sheet name>`. Values are shown as
the spreadsheet displays them (number formats kept), and a merged cell's value fills every cell of its
range, so a header spanning several columns labels each of them."""

from __future__ import annotations

from pathlib import Path

from harness.collection.numformat import display
from harness.collection.tables import drop_empty, markdown_table

Grid = list[list[str]]


class SpreadsheetError(Exception):
    """A workbook that cannot be read; the message says why."""


def xlsx_sheets(path: Path) -> list[tuple[str, Grid]]:
    import openpyxl

    try:
        # data_only: a formula shows its last computed value, as in the spreadsheet program
        workbook = openpyxl.load_workbook(path, data_only=True)
    except Exception as error:
        raise SpreadsheetError(f"corrupt or unreadable workbook: {type(error).__name__}: {error}") from None
    sheets = []
    for sheet in workbook.worksheets:
        grid = [[display(cell.value, cell.number_format) for cell in row] for row in sheet.iter_rows()]
        for merged in sheet.merged_cells.ranges:
            top_left = grid[merged.min_row - 1][merged.min_col - 1] if len(grid) >= merged.min_row else ""
            for row in range(merged.min_row - 1, min(merged.max_row, len(grid))):
                for column in range(merged.min_col - 1, min(merged.max_col, len(grid[row]))):
                    grid[row][column] = top_left
        sheets.append((sheet.title, grid))
    return sheets


def xls_sheets(path: Path) -> list[tuple[str, Grid]]:
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
        for row_low, row_high, column_low, column_high in sheet.merged_cells:
            top_left = grid[row_low][column_low]
            for row in range(row_low, row_high):
                for column in range(column_low, column_high):
                    grid[row][column] = top_left
        sheets.append((sheet.name, grid))
    return sheets


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


def sheets_markdown(sheets: list[tuple[str, Grid]]) -> tuple[str, int]:
    """The Markdown of the sheets that hold anything, and how many those are."""
    parts = []
    for name, grid in sheets:
        rows = drop_empty(grid)
        if rows:
            parts.append(f"## {name}\n\n{markdown_table(rows)}")
    return "\n".join(parts), len(parts)
