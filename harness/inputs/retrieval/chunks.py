"""A collection's documents as chunks: windows of tokens, as OpenAI's File Search cuts them by default (its static
strategy: 800 tokens, 400 of them shared with the next window), so that k chunks hold about the same text on
either back end. Tokens are tiktoken's cl100k_base (inputs/collections/tokens.py, read offline), else 4
characters a token."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.inputs.collections.tokens import encoding, tokenizer

INDEX_PAGES = ("index.md", "documents_index.md")
"""The collection's index (which file is which company, year and report), as written by hand or as `tasks import`
names it once converted: metadata, not a document to retrieve."""
_CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class ChunkSettings:
    """How documents are cut: OpenAI's static chunking, with its defaults and its bounds."""

    max_tokens: int = 800
    overlap_tokens: int = 400

    def __post_init__(self) -> None:
        if not 100 <= self.max_tokens <= 4096:
            raise ValueError(f"chunk_tokens={self.max_tokens}: from 100 to 4096 (OpenAI's bounds)")
        if not 0 <= self.overlap_tokens <= self.max_tokens // 2:
            raise ValueError(f"chunk_overlap={self.overlap_tokens}: from 0 to half of chunk_tokens ({self.max_tokens})")

    def record(self) -> dict[str, Any]:
        """What run.yaml records (OpenAI's names for them), with the tokenizer that counted."""
        found = encoding()
        return {
            "strategy": "static",
            "max_chunk_size_tokens": self.max_tokens,
            "chunk_overlap_tokens": self.overlap_tokens,
            "tokens": found[0] if found else f"estimate: {_CHARS_PER_TOKEN} characters per token",
        }


def chunk_settings(args: Mapping[str, str]) -> ChunkSettings:
    """The chunking a solver's `chunk_tokens` and `chunk_overlap` arguments ask for (OpenAI's defaults); a bad one
    is a ValueError naming it."""
    values = []
    for name, default in (("chunk_tokens", 800), ("chunk_overlap", 400)):
        given = args.get(name, str(default))
        if not given.strip().isdigit():
            raise ValueError(f"{name}={given!r}: a whole number of tokens")
        values.append(int(given))
    return ChunkSettings(*values)


@dataclass(frozen=True)
class Chunk:
    """One retrieved chunk: the file it is cut from, its place there, its score for the query and its text."""

    file: str
    index: int
    score: float
    text: str

    def record(self) -> dict[str, Any]:
        return {"file": self.file, "index": self.index, "score": round(self.score, 6), "text": self.text}


def chunk_text(text: str, settings: ChunkSettings) -> list[str]:
    """TEXT as windows of `max_tokens`, each starting `max_tokens - overlap_tokens` after the last; a text shorter
    than one window is one chunk, an empty one none."""
    found = encoding()
    step = settings.max_tokens - settings.overlap_tokens
    if found is None:
        width, stride = settings.max_tokens * _CHARS_PER_TOKEN, step * _CHARS_PER_TOKEN
        return [text[start : start + width] for start in _starts(len(text), width, stride)]
    coder = found[1]
    tokens = coder.encode(text, disallowed_special=())
    # a window's edge may split a character's bytes: its piece is dropped there and read whole in the overlap
    return [
        coder.decode_bytes(tokens[start : start + settings.max_tokens]).decode("utf-8", errors="ignore")
        for start in _starts(len(tokens), settings.max_tokens, step)
    ]


def _starts(length: int, width: int, stride: int) -> range:
    if length == 0:
        return range(0)
    last = max(0, length - width)
    return range(0, last + stride, stride) if last % stride else range(0, last + 1, stride)


def collection_documents(folder: Path) -> list[Path]:
    """The documents of a collection folder (every file but its index page), in name order."""
    index = index_page(folder)
    return sorted(path for path in folder.rglob("*") if path.is_file() and path != index)


def index_page(folder: Path) -> Path | None:
    """The collection's index page, if it has one."""
    return next((folder / name for name in INDEX_PAGES if (folder / name).is_file()), None)


def index_rows(index: str) -> list[dict[str, str]]:
    """The documents an index page lists (`| file | symbol | year | doctype |`), each as its fields."""
    rows = [line.strip().strip("|").split("|") for line in index.splitlines() if line.strip().startswith("|")]
    if len(rows) < 2:
        return []
    names = [name.strip() for name in rows[0]]
    return [
        dict(zip(names, (cell.strip() for cell in row), strict=False)) for row in rows[2:] if len(row) == len(names)
    ]


def document_kinds_and_tokens(folder: Path) -> dict[str, tuple[str, int]]:
    """FOLDER's documents by file: their kind (the index page's `doctype`, else `unknown`) and their tokens (as
    the chunking counts them)."""
    index = index_page(folder)
    listed = index_rows(index.read_text(encoding="utf-8")) if index is not None else []
    kinds = {row["file"]: row.get("doctype") or "unknown" for row in listed if "file" in row}
    count = tokenizer()[1]
    found = {}
    for path in collection_documents(folder):
        name = path.relative_to(folder).as_posix()
        found[name] = (kinds.get(name, "unknown"), count(path.read_text(encoding="utf-8", errors="replace")))
    return found
