"""`collection stats`: per domain, documents, bytes, tokens and source formats (a paper's per-domain
composition table), from the manifest when there is one, else counted from the files."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from harness.core.errors import InputError
from harness.inputs.collections.manifest import manifest_path, read_manifest
from harness.inputs.collections.tokens import tokenizer


@dataclass
class _DomainStats:
    domain: str
    documents: int
    bytes: int
    tokens: int
    formats: Counter[str]
    origin: str
    """`manifest`, or `files` when counted from the folder."""


def domain_stats(collection: Path) -> _DomainStats:
    manifest = read_manifest(manifest_path(collection))
    if manifest is not None:
        documents = manifest.documents
        formats = Counter(entry.format for entry in documents)
        return _DomainStats(
            collection.name,
            len(documents),
            sum(e.bytes for e in documents),
            sum(e.tokens for e in documents),
            formats,
            "manifest",
        )
    count = tokenizer()[1]
    files = sorted(path for path in collection.iterdir() if path.is_file())
    tokens = sum(count(path.read_bytes().decode("utf-8", errors="replace")) for path in files)
    formats = Counter(path.suffix.lstrip(".").lower() or "none" for path in files)
    return _DomainStats(collection.name, len(files), sum(p.stat().st_size for p in files), tokens, formats, "files")


def collections_for(spec: str, collections_dir: Path) -> list[Path]:
    if not collections_dir.is_dir():
        raise InputError(f"{collections_dir}: collections folder not found")
    if spec == "all":
        return sorted(path for path in collections_dir.iterdir() if path.is_dir() and not path.name.startswith("."))
    path = collections_dir / spec
    if not path.is_dir():
        raise InputError(f"{path}: collection folder for domain {spec!r} not found")
    return [path]


def print_stats(rows: list[_DomainStats], console: Console) -> None:
    table = Table(title="collections")
    for column in ("domain", "documents", "MB", "tokens", "formats", "from"):
        table.add_column(column, justify="left" if column in ("domain", "formats", "from") else "right")
    for row in rows:
        formats = ", ".join(
            f"{fmt} {n}" for fmt, n in sorted(row.formats.items(), key=lambda item: (-item[1], item[0]))
        )
        table.add_row(row.domain, str(row.documents), f"{row.bytes / 1e6:.2f}", f"{row.tokens:,}", formats, row.origin)
    if len(rows) > 1:
        table.add_row(
            "total",
            str(sum(r.documents for r in rows)),
            f"{sum(r.bytes for r in rows) / 1e6:.2f}",
            f"{sum(r.tokens for r in rows):,}",
            "",
            "",
        )
    console.print(table)
