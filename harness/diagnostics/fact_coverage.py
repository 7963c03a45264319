"""Which of a task's intermediate facts an episode *saw*: deterministic, free, from its logged commands and outputs.

A cell is seen when its value appears in what the agent was shown of the row's document: the output of a
command that names the document's file (`cat`, `grep ... file`, `sed -n ... file`) or a glob the shell expands
over it (`cat /workspace/documents/*.md`), or an output line that
carries the document's content under its name (a `grep -r` hit `file:...`; harness/diagnostics/evidence.py). How a
value appears:
- a number as any number of the text (read by the numeric grader's parser: separators, decimal commas) equal
  to it, or equal to it rounded to the text number's own precision when that is 4 significant digits or more
  (`15.44` for 15.4412), also when the text gives it with 5 or more significant digits in thousands, 10^4
  (万), millions, 10^8 (亿) or billions (gold values of 10,000 and more: `373.63亿`, `37,363,070` for
  37,363,070,000), or as a percentage of a fraction;
- text case-folded, spaces collapsed, as a substring; a list (or an object) when each of its items (values)
  appears.
Booleans and nulls cannot be seen in text: such cells are not counted (a row of only them is left out).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal

from harness.core.facts import CellValue, FactRow
from harness.diagnostics.evidence import DocumentIndex, shown_under
from harness.grading.literal import Unparseable, parse_number
from harness.records.events import ActionEvent, Event, ObservationEvent

_SIGNIFICANT_DIGITS = 4
_SCALED_DIGITS = 5
_NUMBER = re.compile(r"(?<![\w.])\d[\d,.]*(?:\s*%)?")
_SCALES = (Decimal(10) ** 3, Decimal(10) ** 4, Decimal(10) ** 6, Decimal(10) ** 8, Decimal(10) ** 9)
_SPACES = re.compile(r"\s+")
_PLAIN = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")
"""The numeric grader's `us_grouping` and `plain` readings (harness/grading/literal.py)."""


def seen_cells(events: Sequence[Event], facts: Sequence[FactRow]) -> list[dict[str, bool]]:
    """Per fact row, column -> whether its value was seen (only the columns whose value can be seen)."""
    return cells_in_texts(_texts_by_document(events, {row.document for row in facts}), facts)


def cells_in_texts(texts: Mapping[str, str], facts: Sequence[FactRow]) -> list[dict[str, bool]]:
    """Per fact row, column -> whether its value appears (as `seen_cells` reads values) in its document's text in
    TEXTS (document -> text; a document without one shows nothing)."""
    shown = {document: _Shown.of(text) for document, text in texts.items()}
    empty = _Shown.of("")
    return [
        {name: shown.get(row.document, empty).holds(value) for name, value in row.cells.items() if _seeable(value)}
        for row in facts
    ]


def _texts_by_document(events: Iterable[Event], documents: set[str]) -> dict[str, str]:
    """Per document, what the agent was shown of it: whole outputs of commands naming it, lines shown under it."""
    index = DocumentIndex(documents)
    named: set[str] = set()
    texts: dict[str, list[str]] = {}
    for event in events:
        if isinstance(event, ActionEvent):
            named = {*index.named_in(event.command), *index.globbed_in(event.command)}
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
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return bool(value) and all(_seeable(item) for item in value)
    if isinstance(value, bool) or value is None:
        return False
    return not isinstance(value, str) or bool(value.strip())


@dataclass(frozen=True)
class _Shown:
    """What the agent was shown of one document, read once: its numbers (normalised) and its folded text."""

    plain: frozenset[Decimal]
    """Every number as written, and a percentage also as its fraction."""
    scaled: frozenset[Decimal]
    """Every number of 5 or more significant digits times each scale (for gold values of 10,000 and more): a
    document full of 4-digit figures would otherwise show every large value at some scale."""
    folded: str

    @classmethod
    def of(cls, text: str) -> _Shown:
        plain = {number.normalize() for number in _numbers(text)}
        precise = [number for number in plain if len(number.as_tuple().digits) >= _SCALED_DIGITS]
        scaled = {(number * scale).normalize() for number in precise for scale in _SCALES}
        return cls(frozenset(plain), frozenset(scaled), _fold(text))

    def holds(self, value: CellValue) -> bool:
        if isinstance(value, dict):
            return all(self.holds(item) for item in value.values())
        if isinstance(value, list):
            return all(self.holds(item) for item in value)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return self._number(Decimal(str(value)))
        return isinstance(value, str) and _fold(value) in self.folded

    def _number(self, gold: Decimal) -> bool:
        """Equal as written, or the gold rounded to a text number's own precision of 4 or more significant
        digits (`373.63亿` for 37,363,070,000; `15.44` for 15.4412)."""
        sets = (self.plain, self.scaled) if abs(gold) >= 10_000 else (self.plain,)
        if any(gold.normalize() in found for found in sets):
            return True
        if gold == 0:
            return False
        exponent = gold.adjusted()
        for digits in range(_SIGNIFICANT_DIGITS, 16):
            unit = Decimal((0, (1,), exponent - digits + 1))
            rounded = gold.quantize(unit, rounding=ROUND_HALF_EVEN).normalize()
            if len(rounded.as_tuple().digits) == digits and any(rounded in found for found in sets):
                return True
        return False


def _numbers(text: str) -> list[Decimal]:
    """Every number of the text as the numeric grader reads it (each distinct literal read once; plain and
    comma-grouped ones directly, as its parser reads them); a percentage also as its fraction."""
    found: list[Decimal] = []
    for literal in {match.group().rstrip(".,").replace(" ", "") for match in _NUMBER.finditer(text)}:
        digits = literal.removesuffix("%")
        if _PLAIN.fullmatch(digits):
            value = Decimal(digits.replace(",", ""))
        else:
            try:
                value = parse_number(literal).value
            except Unparseable:
                continue
        found.append(value)
        if literal.endswith("%"):
            found.append(value / 100)
    return found


def _fold(text: str) -> str:
    return _SPACES.sub(" ", text.casefold())
