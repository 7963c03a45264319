"""What converting one source file gives: its Markdown, or the reason it is skipped (every format's module)."""

from __future__ import annotations

from dataclasses import dataclass, field


class Unconvertible(Exception):
    """The reason a source is skipped, e.g. `encrypted PDF (needs a password)`."""


@dataclass
class Conversion:
    markdown: str
    pages: int | None = None
    sheets: int | None = None
    textless_pages: int = 0
    ocr: bool = False
    notes: list[str] = field(default_factory=list)
