"""The manifest beside a collection (`collections/NAME.manifest.json`, never inside the folder the agent
sees): one entry per output file, the files that were skipped and why, the tokenizer, and the collection's
content hash, equal to the one `run.yaml` records."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from harness.core.json_text import json_text

_SCHEMA = "harness-collection-manifest/1"


@dataclass
class Entry:
    """One output file of the collection."""

    name: str
    source: str | None
    """The source's path relative to SRC_DIR; None for a file that no build made (put there by hand)."""
    source_sha256: str | None
    sha256: str
    bytes: int
    tokens: int
    format: str
    """The source format (pdf, xlsx, csv, ...), or the file's own suffix for a hand-placed file."""
    converter: str | None = None
    converter_version: str | None = None
    ocr: bool = False
    """Pages of this PDF were read by OCR."""
    textless_pages: int = 0
    """Pages of this PDF without a text layer (read by OCR when `ocr`)."""
    pages: int | None = None
    sheets: int | None = None
    notes: list[str] = field(default_factory=list)
    image_dpi: int | None = None
    """The resolution its pages were rendered at (`--page-images`); None: no pictures kept."""
    images: list[dict[str, Any]] = field(default_factory=list)
    """Its page images and figures (`pdf_images.PdfImage`: file, kind, page, width, height, caption, bbox)."""


@dataclass
class Skipped:
    source: str
    reason: str


@dataclass
class OpenedArchive:
    """An archive in SRC_DIR the build opened: its documents' sources are named `SOURCE/member`."""

    source: str
    members: int
    """Its members, folders and refused ones included."""
    bytes: int
    """Bytes unpacked from it."""


@dataclass
class Manifest:
    domain: str
    source_dir: str
    tokenizer: str
    hash: str
    documents: list[Entry]
    skipped: list[Skipped]
    schema: str = _SCHEMA
    archives: list[OpenedArchive] = field(default_factory=list)


def manifest_path(collection: Path) -> Path:
    return collection.parent / f"{collection.name}.manifest.json"


def read_manifest(path: Path) -> Manifest | None:
    """None when there is none or it cannot be read (the next build then converts everything again)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        known = {item.name for item in fields(Entry)}
        return Manifest(
            domain=data["domain"],
            source_dir=data["source_dir"],
            tokenizer=data["tokenizer"],
            hash=data["hash"],
            documents=[Entry(**{k: v for k, v in item.items() if k in known}) for item in data["documents"]],
            skipped=[Skipped(**item) for item in data["skipped"]],
            schema=data.get("schema", _SCHEMA),
            archives=[OpenedArchive(**item) for item in data.get("archives", [])],
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


_COLLECTION_FILE_MODE = 0o644


def write_manifest(path: Path, manifest: Manifest) -> None:
    data: dict[str, Any] = {"schema": manifest.schema} | {k: v for k, v in asdict(manifest).items() if k != "schema"}
    write_bytes_atomic(path, (json_text(data, indent=1) + "\n").encode())


def write_bytes_atomic(path: Path, content: bytes, scratch: Path | None = None) -> None:
    """Write into `scratch` (default: the target's folder; same file system) and rename, so a killed build
    never leaves a half-written file. The file is world-readable (mkstemp's 0600 would keep the sandbox's
    unprivileged user out of the collection)."""
    handle, temporary = tempfile.mkstemp(dir=scratch or path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(content)
        os.chmod(temporary, _COLLECTION_FILE_MODE)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
