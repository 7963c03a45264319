"""The raw archive's files: a table as CSV, XLSX, HTML or Markdown, and the copied files and texts."""

from __future__ import annotations

import csv
import html
import re
import shutil
import zipfile
from collections.abc import Sequence
from pathlib import Path

from .spec import Copy, Table


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def write_raw(table: Table, folder: Path) -> None:
    path = folder / table.source / f"{table.stem}.{table.fmt}"
    path.parent.mkdir(parents=True, exist_ok=True)
    if table.fmt == "csv":
        with path.open("w", newline="", encoding="utf-8") as out:
            csv.writer(out).writerows([table.header, *table.rows])
    elif table.fmt == "xlsx":
        write_xlsx(table, path)
    elif table.fmt == "html":
        path.write_text(html_page(table), encoding="utf-8")
    elif table.fmt == "md":
        table_text = markdown_table(table.header, table.rows)
        path.write_text(f"# {table.title}\n\n{table.intro}\n\n{table_text}\n", encoding="utf-8")
    else:
        raise ValueError(table.fmt)


def html_page(table: Table) -> str:
    def cells(row: list[str], tag: str) -> str:
        return "".join(f"<{tag}>{html.escape(c)}</{tag}>" for c in row)

    body = "\n".join(f"<tr>{cells(row, 'td')}</tr>" for row in table.rows)
    return (
        f'<!DOCTYPE html>\n<html lang="{table.lang}"><head><meta charset="utf-8"><title>{html.escape(table.title)}'
        f"</title></head>\n<body>\n<h1>{html.escape(table.title)}</h1>\n<p>{html.escape(table.intro)}</p>\n"
        f"<table>\n<thead><tr>{cells(table.header, 'th')}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>\n"
        "</body></html>\n"
    )


def write_xlsx(table: Table, path: Path) -> None:
    """Numbers as numbers, with a number format that shows exactly the printed decimals; keys as text."""
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.title = "Data"
    sheet.append(table.header)
    for row in table.rows:
        cells: list[object] = [row[0]]
        for text in row[1:]:
            if re.fullmatch(r"-?\d+(\.\d+)?", text):
                cells.append(int(text) if "." not in text else float(text))
            else:
                cells.append(text)
        sheet.append(cells)
        for cell, text in zip(sheet[sheet.max_row][1:], row[1:], strict=True):
            if isinstance(cell.value, (int, float)):
                places = len(text.partition(".")[2])
                cell.number_format = "0." + "0" * places if places else "0"
    notes = book.create_sheet("Notes")
    notes.append(["About this table"])
    notes.append([table.title])
    notes.append([table.intro])
    book.save(path)
    _reproducible_zip(path)


def _reproducible_zip(path: Path) -> None:
    """openpyxl stamps the save time into docProps/core.xml and the zip entries: fix both, so that a rebuild
    gives the same bytes (and the incremental builder converts nothing)."""
    with zipfile.ZipFile(path) as archive:
        entries = [(info.filename, archive.read(info)) for info in archive.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries:
            if name == "docProps/core.xml":
                data = re.sub(rb"(<dcterms:(?:created|modified)[^>]*>)[^<]*", rb"\g<1>2000-01-01T00:00:00Z", data)
            archive.writestr(zipfile.ZipInfo(name, date_time=(2000, 1, 1, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)


def write_copy(copy: Copy, folder: Path) -> None:
    """A file as it is, or a text as Markdown (`.md` added to a name without a suffix)."""
    target = folder / copy.source / (copy.name if "." in copy.name else copy.name + ".md")
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(copy.content, Path):
        shutil.copyfile(copy.content, target)
    else:
        target.write_text(copy.content.strip() + "\n", encoding="utf-8")
