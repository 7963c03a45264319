"""The `set` and `list` graders: answers made of several short items, e.g. tickers (docs/GRADERS.md §3)."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

from harness.grading.answer import find_answer_tag
from harness.grading.gold import GoldSpec
from harness.grading.numeric import GoldAnswerError
from harness.grading.record import Grade, Verdict

GRADER_VERSION = "items-1.0"
MAX_CONTENT_CHARS = 4000
# Items are separated by commas (ASCII, full-width, ideographic), semicolons or line breaks, never by spaces:
# an item may hold spaces (`Bank of America`).
_SEPARATOR = re.compile(r"[,，、;；\n]")
_WRAPPERS = "*_`\"'“”‘’"
_BULLET = re.compile(r"^(?:[-•*]|\d+[.)])\s+")


def _split_items(text: str) -> list[str]:
    """Items as written (wrappers, bullets and surrounding spaces removed); empty items dropped."""
    text = unicodedata.normalize("NFKC", text).strip().strip("[]")
    items = []
    for raw in _SEPARATOR.split(text):
        item = _BULLET.sub("", raw.strip()).strip(_WRAPPERS).strip()
        if item:
            items.append(" ".join(item.split()))
    return items


def _item_key(item: str) -> str:
    return item.casefold()


def f1(predicted: list[str], gold: list[str]) -> float:
    """Item-level F1 over the distinct case-folded items."""
    found, wanted = {_item_key(i) for i in predicted}, {_item_key(i) for i in gold}
    hits = len(found & wanted)
    if not hits:
        return 0.0
    precision, recall = hits / len(found), hits / len(wanted)
    return round(2 * precision * recall / (precision + recall), 6)


class ItemsGrader:
    """`set`: the same items in any order; `list`: the same items in the gold's order."""

    def __init__(self, name: str):
        self.name = name
        self.version = f"{name}-1.0"

    def validate(self, gold: GoldSpec) -> None:
        items = _split_items(gold.answer)
        keys = [_item_key(item) for item in items]
        if not items:
            raise GoldAnswerError(f"{gold.answer!r} holds no items")
        duplicated = [key for key, count in Counter(keys).items() if count > 1]
        if duplicated:
            raise GoldAnswerError(f"{gold.answer!r}: item {duplicated[0]!r} appears twice")

    def grade(self, submission: str | None, gold: GoldSpec) -> Grade:
        wanted = _split_items(gold.answer)
        tag = find_answer_tag(submission or "")
        if tag.reason is not None:
            return Grade.uniform(Verdict.NO_ANSWER, [tag.reason], tag.content, self.version)
        content = tag.content or ""
        if len(content) > MAX_CONTENT_CHARS:
            return Grade.uniform(Verdict.UNPARSEABLE, ["TOO_LONG"], content, self.version)
        found = _split_items(content)
        if not found:
            return Grade.uniform(Verdict.UNPARSEABLE, ["NO_ITEMS"], content, self.version)
        score = f1(found, wanted)
        parsed = ", ".join(found)
        keys, wanted_keys = [_item_key(i) for i in found], [_item_key(i) for i in wanted]
        matches = keys == wanted_keys if self.name == "list" else set(keys) == set(wanted_keys)
        if not matches:
            reasons = ["ORDER"] if self.name == "list" and sorted(keys) == sorted(wanted_keys) else []
            return Grade(
                Verdict.WRONG_VALUE,
                Verdict.WRONG_VALUE,
                Verdict.WRONG_VALUE,
                reasons,
                content,
                parsed,
                None,
                self.version,
                item_f1=score,
            )
        reasons = []
        if len(set(keys)) != len(keys):
            reasons.append("DUPLICATE")
        same_case = found == wanted if self.name == "list" else set(found) == set(wanted)
        if not same_case:
            reasons.append("CASE")
        strict = Verdict.FORMAT_VIOLATION if reasons else Verdict.CORRECT
        return Grade(
            Verdict.CORRECT, strict, Verdict.CORRECT, reasons, content, parsed, None, self.version, item_f1=score
        )
