"""A reply to a batch of questions read as FinDocMRE's paper reads it (Table 14 asks for a JSON list of
`{"answer": ...}`, "in the same order as the questions"): one answer per question, or why that question has none.

The list is the first list of objects (`[{`) in the reply that reads whole as JSON, prose or a fence around it
being no part of it; when none does, the first one's elements are cut apart at the list's own commas (outside
strings and brackets, and between `}` and `{` where a string was left open) and each is read alone, so an
element the model garbled costs that question only. An element's answer is its `answer`: a string, a number
(as JSON reads it), or a list of option letters joined; anything else is that question's problem, said with its
number."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from harness.core.untrusted_json import MAX_JSON_CHARS, UnreadableJson, read_json

__all__ = ["AnswerItem", "read_answer_list"]

_LIST_OF_OBJECTS = re.compile(r"\[\s*\{")
_BETWEEN_OBJECTS = re.compile(r"(?<=\})\s*,\s*(?=\{)")
_CANDIDATES = 5
"""Lists tried (each read whole) before the first is taken as the garbled one: bounds the work on a reply of
many brackets."""


@dataclass(frozen=True)
class AnswerItem:
    answer: str | None
    """What the reply answered to this question; None when it gave no readable answer."""
    problem: str | None = None
    """Why there is none: `answer 3 of 6: not {"answer": ...} but 12.3`."""


def read_answer_list(reply: str, count: int) -> list[AnswerItem]:
    """COUNT items, one per question in order, from REPLY."""
    if len(reply) > MAX_JSON_CHARS:
        return [AnswerItem(None, f"the reply is too long to read ({len(reply):,} characters)")] * count
    found = itertools.islice(_LIST_OF_OBJECTS.finditer(reply), _CANDIDATES)
    spans = [_span(reply, match.start()) for match in found]
    if not spans:
        return [AnswerItem(None, 'the reply holds no JSON list of {"answer": ...}')] * count
    elements: list[Any] | None = None
    for span in spans:
        try:
            whole = read_json(span)
        except UnreadableJson:
            continue
        if isinstance(whole, list):
            elements = whole
            break
    if elements is None:
        elements = [_element(text) for text in _split_elements(spans[0][1:-1])]
    items = [_item(element, number, count) for number, element in enumerate(elements[:count], start=1)]
    missing = f"the reply's list has {len(elements)} answers for {count} questions"
    return items + [
        AnswerItem(None, f"answer {n} of {count}: none ({missing})") for n in range(len(items) + 1, count + 1)
    ]


def _span(reply: str, start: int) -> str:
    """The list opening at START up to its own closing bracket (outside strings), else up to the reply's last."""
    depth = 0
    for index, char in _unquoted(reply, start):
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return reply[start : index + 1]
    end = reply.rfind("]")
    return reply[start : end + 1] if end > start else reply[start:] + "]"


def _unquoted(text: str, start: int = 0) -> Iterator[tuple[int, str]]:
    """TEXT's characters from START that lie outside JSON strings, with their indexes."""
    quoted, escaped = False, False
    for index in range(start, len(text)):
        char = text[index]
        if quoted:
            escaped = not escaped and char == "\\"
            quoted = escaped or char != '"'
        elif char == '"':
            quoted = True
        else:
            yield index, char


class _Garbled:
    """An element that is no JSON value: its text."""

    def __init__(self, text: str) -> None:
        self.text = text


def _element(text: str) -> Any:
    try:
        return read_json(text)
    except UnreadableJson:
        return _Garbled(text.strip())


def _item(element: Any, number: int, count: int) -> AnswerItem:
    where = f"answer {number} of {count}"
    if isinstance(element, _Garbled):
        return AnswerItem(None, f"{where}: not JSON: {_cut(element.text)}")
    if not isinstance(element, dict) or "answer" not in element:
        return AnswerItem(None, f'{where}: not {{"answer": ...}} but {_shown(element)}')
    value = element["answer"]
    if isinstance(value, str):
        return AnswerItem(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return AnswerItem(json.dumps(value))
    if isinstance(value, list) and value and all(isinstance(letter, str) for letter in value):
        return AnswerItem("".join(value))
    return AnswerItem(None, f"{where}: its answer is {_shown(value)}, not a string")


def _shown(value: Any) -> str:
    return _cut(json.dumps(value, ensure_ascii=False))


def _cut(text: str) -> str:
    return text if len(text) <= 80 else text[:77] + "..."


def _split_elements(body: str) -> list[str]:
    """BODY (a list's text without its brackets) cut at its top-level commas; a piece that still holds `}, {`
    (a string left open swallowed the comma after it) cut there too."""
    pieces, depth, start = [], 0, 0
    for index, char in _unquoted(body):
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth = max(0, depth - 1)
        elif char == "," and depth == 0:
            pieces.append(body[start:index])
            start = index + 1
    if body[start:].strip():
        pieces.append(body[start:])
    return [part for piece in pieces for part in _BETWEEN_OBJECTS.split(piece)]
