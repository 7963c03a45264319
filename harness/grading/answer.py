"""Finding the `<answer>` tag in a submission (docs/GRADING.md §2.2)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from harness.core.fences import scan_fences

_OPEN_TAG = re.compile(r"<answer\s*>", re.IGNORECASE)
_CLOSE_TAG = re.compile(r"</answer\s*>", re.IGNORECASE)


@dataclass(frozen=True)
class _TagResult:
    """The content of the last `<answer>` tag, or why there is none."""

    content: str | None
    reason: str | None = None  # NO_TAG | UNCLOSED_TAG | EMPTY_TAG when content is unusable


def strip_code_blocks(text: str) -> str:
    """Remove fenced code blocks (``` or ~~~), so a tag inside a quoted command never counts.

    The same scanner as the action parser (`harness.core.fences`); an unclosed fence runs to the end.
    """
    return scan_fences(text).prose


def find_answer_tag(submission: str) -> _TagResult:
    """Content of the last opening tag up to the first closing tag after it."""
    openings = list(_OPEN_TAG.finditer(submission))
    if not openings:
        return _TagResult(None, "NO_TAG")
    last_open = openings[-1]
    close = _CLOSE_TAG.search(submission, last_open.end())
    if close is None:
        return _TagResult(None, "UNCLOSED_TAG")
    content = submission[last_open.end() : close.start()]
    if not content.strip():
        return _TagResult(content, "EMPTY_TAG")
    return _TagResult(content)


def has_closed_answer(text: str) -> bool:
    """True when the text holds at least one `<answer>` followed by a `</answer>`: the episode ends."""
    opening = _OPEN_TAG.search(text)
    return opening is not None and _CLOSE_TAG.search(text, opening.end()) is not None


def command_submits_answer(command: str) -> bool:
    """A command that itself contains `<answer>` is an echo submission (docs/GRADING.md §2.2.1)."""
    return _OPEN_TAG.search(command) is not None
