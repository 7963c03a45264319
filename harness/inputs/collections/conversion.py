"""What converting one source file gives: its Markdown, or the reason it is skipped (every format's module)."""

from __future__ import annotations

from dataclasses import dataclass, field


class Unconvertible(Exception):
    """The reason a source is skipped, e.g. `encrypted PDF (needs a password)`."""


def output_too_large(max_bytes: int) -> Unconvertible:
    return Unconvertible(f"output size: its Markdown is larger than {max_bytes / 2**20:g} MB (--max-output)")


@dataclass
class Conversion:
    markdown: str
    pages: int | None = None
    sheets: int | None = None
    textless_pages: int = 0
    ocr: bool = False
    notes: list[str] = field(default_factory=list)
