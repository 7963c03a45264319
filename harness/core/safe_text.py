"""Text from input data or an agent, made safe to show a person. A terminal acts on control characters (ESC
starts sequences that set the title, write the clipboard, clear the screen or make the terminal type an
answer into the person's next line) and reorders text at a bidirectional control, and a Markdown table takes
`|` and a line break as its own structure."""

from __future__ import annotations

import re

_BIDI = "\u202a-\u202e\u2066-\u2069"
"""The bidirectional embeddings, overrides and isolates: shown, they reorder the text after them, so a command or
a verdict can read as another (Trojan Source, CVE-2021-42574)."""
_CONTROL = re.compile(rf"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}\ud800-\udfff]")
"""C0 but tab and newline, DEL, C1, the bidirectional controls, and lone surrogates (which no terminal encoding can
write)."""
_CONTROL_OR_LINE_BREAK = re.compile(rf"[\x00-\x1f\x7f-\x9f\u2028\u2029{_BIDI}\ud800-\udfff]")
_MARKDOWN_CELL = {"|": "&#124;", "`": "&#96;"}


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def for_terminal(text: str, keep_newlines: bool = True) -> str:
    """TEXT with every control character shown as its escape (`\\x1b`); newlines and tabs kept unless
    KEEP_NEWLINES is false (a name shown on one line)."""
    return (_CONTROL if keep_newlines else _CONTROL_OR_LINE_BREAK).sub(_visible, text)


def markdown_cell(text: object) -> str:
    """TEXT as one cell of a Markdown table: on one line, no control character, `|` and backticks as HTML
    entities (a renderer shows them; none starts a cell or a code span)."""
    shown = for_terminal(str(text), keep_newlines=False)
    return re.sub(r"[|`]", lambda match: _MARKDOWN_CELL[match.group()], shown)


def markdown_grid(header: list[str], body: list[list[str]]) -> list[str]:
    """HEADER and BODY as a Markdown table's lines, each cell through `markdown_cell`."""
    lines = ["| " + " | ".join(map(markdown_cell, row)) + " |" for row in (header, *body)]
    return [lines[0], "|" + "---|" * len(header), *lines[1:]]
