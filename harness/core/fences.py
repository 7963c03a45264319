"""Fenced code blocks (``` and ~~~) in model text: one scanner for the action parser and the answer search.

CommonMark's rules, so both readers agree on where a block starts and ends: an opening fence is a line
with at most 3 spaces of indent and 3 or more backticks or tildes (a backtick fence's info string holds
no backtick); a closing fence uses the same character, is at least as long, and has nothing after it
but spaces or tabs; an unclosed block runs to the end of the text. One pass over the lines, each line
read a bounded number of times, so the scan is linear in the text's length whatever the text holds.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class _FencedBlock:
    """One fenced block: its language (first word of the info string, lower-cased), body and closure."""

    language: str
    body: str
    closed: bool


@dataclass(frozen=True)
class _ScannedText:
    """The text split into prose (every line outside a block) and its fenced blocks, in order."""

    prose: str
    blocks: list[_FencedBlock]


@dataclass(frozen=True)
class _Fence:
    char: str
    length: int
    indent: int
    info: str


def _read_fence(line: str) -> _Fence | None:
    """The fence that `line` (without its line ending) opens or closes, if it is a fence line."""
    indent = len(line) - len(line.lstrip(" "))
    if indent > 3 or indent == len(line) or line[indent] not in "`~":
        return None
    char = line[indent]
    rest = line[indent:].lstrip(char)
    length = len(line) - indent - len(rest)
    if length < 3 or (char == "`" and "`" in rest):
        return None
    return _Fence(char, length, indent, rest.strip(" \t"))


def _closes(line: str, opening: _Fence) -> bool:
    fence = _read_fence(line)
    return fence is not None and fence.char == opening.char and fence.length >= opening.length and not fence.info


def scan_fences(text: str) -> _ScannedText:
    """Split `text` into prose and fenced blocks; lines end at `\\n` (a `\\r` before it is dropped)."""
    prose: list[str] = []
    blocks: list[_FencedBlock] = []
    opening: _Fence | None = None
    body: list[str] = []
    for raw in _lines(text):
        line = raw.rstrip("\n")
        line = line[:-1] if line.endswith("\r") else line
        if opening is None:
            opening = _read_fence(line)
            if opening is None:
                prose.append(raw)
            else:
                body = []
        elif _closes(line, opening):
            blocks.append(_FencedBlock(_language(opening.info), "\n".join(body), closed=True))
            opening = None
        else:
            body.append(_dedent(line, opening.indent))
    if opening is not None:
        blocks.append(_FencedBlock(_language(opening.info), "\n".join(body), closed=False))
    return _ScannedText("".join(prose), blocks)


def _lines(text: str) -> list[str]:
    """Lines with their `\\n` kept, so the prose keeps its line breaks (only `\\n` ends a line)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def _language(info: str) -> str:
    words = info.split(maxsplit=1)
    return words[0].lower() if words else ""


def _dedent(line: str, indent: int) -> str:
    """Content lines lose up to the opening fence's indent, as in CommonMark."""
    return line[min(indent, len(line) - len(line.lstrip(" "))) :]
