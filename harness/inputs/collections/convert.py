"""One source file to Markdown. A file that cannot be converted (corrupt, encrypted, no text layer, nothing
in it) raises `Unconvertible` with the reason; the builder lists it and goes on."""

from __future__ import annotations

import functools
import importlib.metadata
from pathlib import Path
from typing import Any

from harness.inputs.collections.conversion import Conversion, Unconvertible
from harness.inputs.collections.spreadsheets import (
    SpreadsheetError,
    sheets_markdown,
    unsaved_formula_notes,
    xls_sheets,
    xlsx_sheets,
)
from harness.inputs.collections.tables import markdown_table

FORMATS = {
    ".pdf": "pdf",
    ".xlsx": "xlsx",
    ".xlsm": "xlsx",
    ".xls": "xls",
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".docx": "docx",
    ".pptx": "pptx",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".md": "md",
    ".markdown": "md",
    ".txt": "txt",
    ".text": "txt",
}
"""File suffix (lower case) to format; any other suffix is unsupported."""

_CONVERTERS = {
    "pdf": ("pymupdf4llm", "pymupdf", 1),
    "xlsx": ("openpyxl", "openpyxl", 4),
    "xls": ("xlrd", "xlrd", 2),
    "csv": ("csv", None, 3),
    "tsv": ("csv", None, 3),
    "docx": ("markitdown", "markitdown", 2),
    "pptx": ("markitdown", "markitdown", 2),
    "html": ("markitdown", "markitdown", 2),
    "md": ("copy", None, 3),
    "txt": ("copy", None, 3),
}
"""Format to (converter, the package whose version counts, our revision). The revision is bumped when our
own rendering around a library changes, so that an incremental build converts those files again."""
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def source_format(path: Path) -> str | None:
    return FORMATS.get(path.suffix.lower())


@functools.cache
def converter(fmt: str) -> tuple[str, str]:
    """(converter name, version) of a format: the library's version and our revision."""
    name, package, revision = _CONVERTERS[fmt]
    version = importlib.metadata.version(package) if package else "stdlib"
    return name, f"{version}+r{revision}"


def convert(
    path: Path, fmt: str, ocr: bool = False, ocr_language: str | None = None, max_bytes: int | None = None
) -> Conversion:
    """`ocr_language`: Tesseract's language spec for PDF pages without text (default English). `max_bytes`:
    a spreadsheet whose Markdown would be larger is refused before it is written out (the caller checks
    the other formats' output)."""
    if fmt == "pdf":
        from harness.inputs.collections.pdf import OCR_LANGUAGE, convert_pdf

        return convert_pdf(path, ocr, ocr_language or OCR_LANGUAGE)
    if fmt in ("xlsx", "xls"):
        if fmt == "xlsx":
            _refuse_ole(path)
        try:
            found = xlsx_sheets(path) if fmt == "xlsx" else xls_sheets(path)
            markdown, sheets = sheets_markdown(found, max_bytes)
        except SpreadsheetError as error:
            raise Unconvertible(str(error)) from None
        if not sheets:
            raise Unconvertible("every sheet is empty")
        return Conversion(markdown, sheets=sheets, notes=unsaved_formula_notes(found))
    if fmt in ("csv", "tsv"):
        return _delimited(path, "\t" if fmt == "tsv" else None)
    if fmt in ("docx", "pptx"):
        _refuse_ole(path)
    if fmt in ("docx", "pptx", "html"):
        return Conversion(_markitdown(path))
    return _text(path)


def _refuse_ole(path: Path) -> None:
    """An encrypted OOXML file is an OLE container holding the encrypted package, not a zip."""
    with path.open("rb") as handle:
        if handle.read(8) != _OLE_MAGIC:
            return
    import msoffcrypto

    with path.open("rb") as handle:
        try:
            encrypted = msoffcrypto.OfficeFile(handle).is_encrypted()
        except Exception:  # not even a valid OLE container: then it is not an encrypted package either
            encrypted = False
    raise Unconvertible(
        "encrypted Office file (password-protected)" if encrypted else "an old binary Office file under a new suffix"
    )


_WESTERN = ("cp1252", "latin_1", "iso8859_15")
"""Tried apart, and preferred when charset-normalizer accepts one at all and no other reads either more cleanly
or as a language more coherently: the Western European code pages are the common legacy 8-bit text, and on a
short text charset-normalizer cannot tell them from others by its mess measure (`München` would read `M³nchen`
in cp850, `Año` `Ańo` in cp1250, `Café … 12,5 M€` `Cafķ … MĆ` in cp775, rated the cleaner: `…` and `€` count as
suspicious symbols). A text in another code page (Cyrillic, Greek, Central European) is no plausible Western
one: charset-normalizer rejects it there, and its own best guess stands."""
_SNIFFED_BYTES = 65536


def _decoded(data: bytes) -> tuple[str, str | None]:
    """The text and the encoding it was read in: UTF-8 (None), else the one charset-normalizer finds."""
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is None:
        raise Unconvertible("not text: no character encoding fits")
    western = from_bytes(data, cp_isolation=list(_WESTERN)).best()
    plausible = western is not None and (western.chaos <= best.chaos or western.coherence >= best.coherence)
    chosen = western if plausible and western is not None else best
    return str(chosen), chosen.encoding


def _text(path: Path) -> Conversion:
    text, encoding = _decoded(path.read_bytes())
    return Conversion(text, notes=_encoding_notes(encoding))


def _encoding_notes(encoding: str | None) -> list[str]:
    return [] if encoding is None else [f"read as {encoding} (not UTF-8), written as UTF-8"]


def sniffed_format(path: Path) -> str | None:
    """ "txt" for a file without a suffix whose start reads as text (no NUL byte, an encoding that fits)."""
    with path.open("rb") as handle:
        start = handle.read(_SNIFFED_BYTES)
    if not start or b"\0" in start:
        return None
    try:
        _decoded(start)
    except Unconvertible:
        return None
    return "txt"


def _delimited(path: Path, delimiter: str | None) -> Conversion:
    import csv
    import io

    text, encoding = _decoded(path.read_bytes())
    if not text.strip():
        raise Unconvertible("empty file")
    if delimiter is None:
        try:
            delimiter = csv.Sniffer().sniff(text[:65536], delimiters=",;\t|").delimiter
        except csv.Error:
            delimiter = ","
    csv.field_size_limit(2**31 - 1)  # a long text cell is data, not an error
    try:
        table = markdown_table(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
    except csv.Error as error:
        raise Unconvertible(f"malformed {'TSV' if delimiter == chr(9) else 'CSV'}: {error}") from None
    return Conversion(table, notes=_encoding_notes(encoding))


@functools.cache
def _markitdown_converter() -> Any:
    """One per process: building it loads magika's file-type model, which takes about a third of a second."""
    from markitdown import MarkItDown

    return MarkItDown(enable_plugins=False)


def _markitdown(path: Path) -> str:
    try:
        # a table whose first row is not marked as a header keeps that row first, under no empty header row
        result = _markitdown_converter().convert_local(str(path), table_infer_header=True)
    except Exception as error:
        reason = str(error).strip().splitlines()
        raise Unconvertible(f"corrupt or unreadable: {type(error).__name__}: {reason[-1] if reason else ''}") from None
    if not result.markdown.strip():
        raise Unconvertible("no text")
    return result.markdown.strip() + "\n"
