"""Small real source files for the `collection build` tests, made with the libraries we depend on."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pymupdf


def make_pdf(path: Path, pages: int = 2) -> None:
    """A report with a heading, a sentence and a ruled 3x3 table on each page."""
    document = pymupdf.open()
    for number in range(1, pages + 1):
        page = document.new_page()
        page.insert_text((72, 72), f"Annual report page {number}", fontsize=16)
        page.insert_text((72, 100), "Revenue grew by 12.5% in 2023.")
        rows = [["Region", "2022", "2023"], ["North", "1,200", "1,350"], ["South", "980", "1,010"]]
        for r, row in enumerate(rows):
            for c, cell in enumerate(row):
                rect = pymupdf.Rect(72 + c * 100, 140 + r * 20, 172 + c * 100, 160 + r * 20)
                page.draw_rect(rect)
                page.insert_text((rect.x0 + 4, rect.y1 - 6), cell)
    path.parent.mkdir(parents=True, exist_ok=True)
    document.save(path)


def make_scanned_pdf(path: Path) -> None:
    """A PDF whose only page is a picture of text: no text layer."""
    text = pymupdf.open()
    text.new_page().insert_text((72, 72), "Harvest volume 4821 tonnes", fontsize=20)
    picture = text[0].get_pixmap(dpi=200)
    scanned = pymupdf.open()
    page = scanned.new_page()
    page.insert_image(page.rect, pixmap=picture)
    path.parent.mkdir(parents=True, exist_ok=True)
    scanned.save(path)


def make_xlsx(path: Path) -> None:
    """A merged title row, a header merged over two year columns, thousands and percent formats, and an
    empty sheet."""
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = "Revenue"
    sheet["A1"] = "Table 1. Revenue by region"
    sheet.merge_cells("A1:C1")
    sheet["A2"], sheet["B2"] = "Region", "Revenue (EUR)"
    sheet.merge_cells("A2:A3")
    sheet.merge_cells("B2:C2")
    sheet["B3"], sheet["C3"] = "2022", "2023"
    sheet.append(["North", 1234567, 1350000.4])
    sheet.append(["South", 980000, 1010000])
    for row in sheet["B4:C5"]:
        for cell in row:
            cell.number_format = "#,##0"
    shares = workbook.create_sheet("Shares")
    shares.append(["Region", "Share"])
    shares.append(["North", 0.5567])
    shares["B2"].number_format = "0.0%"
    workbook.create_sheet("Empty")
    path.parent.mkdir(parents=True, exist_ok=True)
    workbook.save(path)


def make_long_pdf(path: Path, pages: int) -> None:
    """Many copies of one report page: a PDF that takes its converter a while."""
    path.parent.mkdir(parents=True, exist_ok=True)
    make_pdf(path.with_suffix(".page.pdf"), pages=1)
    document, page = pymupdf.open(), pymupdf.open(path.with_suffix(".page.pdf"))
    for _ in range(pages):
        document.insert_pdf(page)
    document.save(path)
    path.with_suffix(".page.pdf").unlink()
