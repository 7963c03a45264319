"""Which of a task's intermediate facts an episode *saw*: deterministic, free, from its logged commands and outputs.

A cell is seen when its value appears in what the agent was shown of the row's document: the output of a
command that names the document's file (`cat`, `grep ... file`, `sed -n ... file`), or an output line that
carries the document's content under its name (a `grep -r` hit `file:...`; harness/signals/evidence.py). How a
value appears:
- a number as any number of the text (read by the numeric grader's parser: separators, decimal commas) equal
  to it at 4 significant digits, also when the text gives it in thousands, 10^4 (万), millions, 10^8 (亿) or
  billions (gold values of 1,000 and more), or as a percentage of a fraction;
- text case-folded, spaces collapsed, as a substring; a list when each of its items appears.
Booleans and nulls cannot be seen in text: such cells are not counted (a row of only them is left out).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from decimal import Decimal

from harness.core.facts import CellValue, FactRow
from harness.grading.literal import Unparseable, parse_number
from harness.records.events import ActionEvent, Event, ObservationEvent
from harness.signals.evidence import DocumentIndex, shown_under

SIGNIFICANT_DIGITS = 4
_NUMBER = re.compile(r"(?<![\w.])\d[\d,.]*(?:\s*%)?")
_SCALES = (Decimal(1), Decimal(10) ** 3, Decimal(10) ** 4, Decimal(10) ** 6, Decimal(10) ** 8, Decimal(10) ** 9)
_SPACES = re.compile(r"\s+")


def seen_cells(events: Sequence[Event], facts: Sequence[FactRow]) -> list[dict[str, bool]]:
    """Per fact row, column -> whether its value was seen (only the columns whose value can be seen)."""
    texts = _texts_by_document(events, {row.document for row in facts})
    found: list[dict[str, bool]] = []
    for row in facts:
        shown = texts.get(row.document, "")
        numbers = _numbers(shown) if shown else []
        folded = _fold(shown)
        found.append({name: _appears(value, numbers, folded) for name, value in row.cells.items() if _seeable(value)})
    return found


def _texts_by_document(events: Iterable[Event], documents: set[str]) -> dict[str, str]:
    """Per document, what the agent was shown of it: whole outputs of commands naming it, lines shown under it."""
    index = DocumentIndex(documents)
    named: set[str] = set()
    texts: dict[str, list[str]] = {}
    for event in events:
        if isinstance(event, ActionEvent):
            named = set(index.named_in(event.command))
        elif isinstance(event, ObservationEvent):
            stdout = event.stdout or ""
            for document in named:
                texts.setdefault(document, []).append(stdout)
            for line in stdout.splitlines():
                for document in index.named_in(line):
                    if document not in named and shown_under(line, document):
                        texts.setdefault(document, []).append(line)
            named = set()
    return {document: "\n".join(parts) for document, parts in texts.items()}


def _seeable(value: CellValue) -> bool:
    if isinstance(value, list):
        return bool(value) and all(_seeable(item) for item in value)
    if isinstance(value, bool) or value is None:
        return False
    return not isinstance(value, str) or bool(value.strip())


def _appears(value: CellValue, numbers: list[Decimal], folded: str) -> bool:
    if isinstance(value, list):
        return all(_appears(item, numbers, folded) for item in value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _number_appears(Decimal(str(value)), numbers)
    return isinstance(value, str) and _fold(value) in folded


def _number_appears(gold: Decimal, numbers: list[Decimal]) -> bool:
    if gold == 0:
        return any(number == 0 for number in numbers)
    exponent = math.floor(math.log10(abs(float(gold))))
    half = Decimal(10) ** (exponent - SIGNIFICANT_DIGITS + 1) / 2
    scales = _SCALES if abs(gold) >= 1000 else _SCALES[:1]
    return any(abs(abs(number) * scale - abs(gold)) <= half for number in numbers for scale in scales)


def _numbers(text: str) -> list[Decimal]:
    """Every number of the text as the numeric grader reads it; a percentage also as its fraction."""
    found: list[Decimal] = []
    for match in _NUMBER.finditer(text):
        literal = match.group().rstrip(".,")
        try:
            parsed = parse_number(literal.replace(" ", ""))
        except Unparseable:
            continue
        found.append(parsed.value)
        if literal.endswith("%"):
            found.append(parsed.value / 100)
    return found


def _fold(text: str) -> str:
    return _SPACES.sub(" ", text.casefold())
