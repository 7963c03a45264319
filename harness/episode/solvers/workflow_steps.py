"""The workflow's pure steps (workflow.py): the documents' metadata from the collection's index, the plan read from
the planner's reply, its templates filled in per document under their restrictions, and JSON lists and code read
from the stages' replies. Everything read here is the model's text: whatever it holds is read or passed over, never
raised."""

from __future__ import annotations

import re
from typing import Any

from harness.core.untrusted_json import json_or_none

METADATA_FIELDS = "Field 1: symbol, stock code. Field 2: year, year. Field 3: doctype, document type."
"""How the planner is told of the metadata (MuDABench's runner's default description)."""
FALLBACK = "What does the {doctype} of {symbol} for {year} say that answers this: <<QUESTION>>"
"""The one template used when the plan cannot be read (theirs asks the same of every document)."""
_FIELD = re.compile(r"\{(\w+)\}")
_FENCE = re.compile(r"```(?:\w+)?\s*(.*?)```", re.DOTALL)


def read_plan(reply: str, question: str) -> list[dict[str, Any]]:
    """The planner's templates with their restrictions; the fallback template when none can be read."""
    found = json_list(reply)
    plan = [
        {"subtask": item["subtask"], "restriction": item.get("restriction") or {}}
        for item in found or []
        if isinstance(item, dict) and isinstance(item.get("subtask"), str) and item["subtask"].strip()
    ]
    return plan or [{"subtask": FALLBACK.replace("<<QUESTION>>", question), "restriction": {}}]


def satisfies(meta: dict[str, str], restriction: Any) -> bool:
    """The document's metadata meets the restriction: each restricted field it has equals the value, or one of
    the values listed (compared as text, as theirs)."""
    if not isinstance(restriction, dict):
        return True
    for name, wanted in restriction.items():
        if name in meta:
            values = wanted if isinstance(wanted, list) else [wanted]
            if meta[name] not in {str(value) for value in values}:
                return False
    return True


def fill(template: str, meta: dict[str, str]) -> str:
    """TEMPLATE with each {field} the metadata has replaced by its value (others left as written)."""
    return _FIELD.sub(lambda match: meta.get(match.group(1), match.group(0)), template)


def tagged(reply: str, tag: str) -> str | None:
    """The text between <TAG> and </TAG>, None without it."""
    match = re.search(rf"<{tag}>(.*?)</{tag}>", reply, re.DOTALL)
    return match.group(1).strip() if match else None


def json_list(text: str) -> list[Any] | None:
    """The JSON list TEXT holds: itself, the first fenced block, or from its first `[` to its last `]`."""
    candidates = [text.strip(), *(block.strip() for block in _FENCE.findall(text))]
    if "[" in text and "]" in text:
        candidates.append(text[text.index("[") : text.rindex("]") + 1])
    for candidate in candidates:
        found = json_or_none(candidate)
        if isinstance(found, list):
            return found
    return None


def code_of(reply: str) -> str:
    """The program between <execute> tags (its own code fence taken off), else the first fenced block, else ""."""
    inside = tagged(reply, "execute")
    if inside is None:
        blocks = _FENCE.findall(reply)
        return blocks[0].strip() if blocks else ""
    fenced = _FENCE.findall(inside)
    return fenced[0].strip() if fenced else inside
