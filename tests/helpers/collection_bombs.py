"""Tiny hostile source files, written byte by byte: each makes a converter take far more memory, time or
output than its size suggests (issue 37)."""

from __future__ import annotations

import zipfile
from pathlib import Path

_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    "</Types>"
)
_ROOT_RELS = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
    'officeDocument" Target="xl/workbook.xml"/></Relationships>'
)
_WORKBOOK = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
    '<sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>'
)
_WORKBOOK_RELS = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
    'worksheet" Target="worksheets/sheet1.xml"/></Relationships>'
)


def _xlsx(path: Path, sheet_data: str, after: str = "") -> None:
    sheet = (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
        f"<sheetData>{sheet_data}</sheetData>{after}</worksheet>"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as package:
        package.writestr("[Content_Types].xml", _CONTENT_TYPES)
        package.writestr("_rels/.rels", _ROOT_RELS)
        package.writestr("xl/workbook.xml", _WORKBOOK)
        package.writestr("xl/_rels/workbook.xml.rels", _WORKBOOK_RELS)
        package.writestr("xl/worksheets/sheet1.xml", sheet)


def make_xlsx_memory_bomb(path: Path) -> None:
    """A value in A1 and one in the sheet's last cell, XFD1048576: read to its last cell, the sheet is a grid of
    17 billion cells."""
    _xlsx(
        path,
        '<row r="1"><c r="A1" t="inlineStr"><is><t>a</t></is></c></row>'
        '<row r="1048576"><c r="XFD1048576" t="inlineStr"><is><t>z</t></is></c></row>',
    )


def make_xlsx_merge_bomb(path: Path, rows: int = 2000, columns: int = 200, text: int = 500) -> None:
    """A long value in A1 merged over ROWS x COLUMNS cells: every cell of the range shows it, Markdown of
    ROWS x COLUMNS x TEXT bytes (200 MB by default) from a file of about 2 KB."""
    last = _column_letter(columns)
    _xlsx(
        path,
        f'<row r="1"><c r="A1" t="inlineStr"><is><t>{"m" * text}</t></is></c></row>'
        f'<row r="{rows}"><c r="{last}{rows}" t="inlineStr"><is><t>z</t></is></c></row>',
        f'<mergeCells count="1"><mergeCell ref="A1:{last}{rows - 1}"/></mergeCells>',
    )


def _column_letter(number: int) -> str:
    letters = ""
    while number:
        number, rest = divmod(number - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def make_pdf_time_bomb(path: Path, glyphs: int = 1500) -> None:
    """A page of GLYPHS one-point letters at scattered places (6 KB): pymupdf4llm's reading order takes about
    a minute on it."""
    import pymupdf

    document = pymupdf.open()
    page = document.new_page()
    page.insert_text((72, 72), "A page of scattered letters")
    moves = "\n".join(f"1 0 0 1 {50 + i * 7 % 500} {50 + i * 13 % 700} Tm (x) Tj" for i in range(glyphs))
    xref = page.get_contents()[0]
    document.update_stream(xref, document.xref_stream(xref) + f"\nBT /F1 1 Tf\n{moves}\nET".encode(), compress=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    document.save(path, garbage=4, deflate=True)
