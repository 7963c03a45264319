"""The one reader of a JSONL record file (results.jsonl, fact_judgments.jsonl, failure_labels.jsonl): each line
read as its record type, each field checked for its type, a line that is not one an InputError naming the file,
the line and the field. (Trajectories are read by the same `read_jsonl`, then as events: reading.py.)"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from harness.core.errors import InputError
from harness.core.json_text import json_text, sendable
from harness.core.record import validation_problem

T = TypeVar("T")


def read_jsonl(path: Path | str) -> list[dict[str, Any]]:
    """Every complete line of an append-only JSONL log; a last line without its newline (the writer was
    killed mid-write) is torn and ignored. Trajectories and results.jsonl are both read this way."""
    records = []
    with Path(path).open(encoding="utf-8") as lines:
        for line in lines:
            if not line.endswith("\n"):
                break
            records.append(json.loads(line))
    return records


def typed(adapter: TypeAdapter[T], fields: dict[str, Any]) -> T:
    """FIELDS as the record ADAPTER reads, each of its type. Read as JSON (strict): a status is its string, a
    nested record its object, and `"3"` is not a count. A lone surrogate an agent or a provider sent (the file
    keeps it escaped, as sent) is read as U+FFFD: the JSON reader refuses it, and no text a person reads takes it."""
    return adapter.validate_json(json_text(sendable(fields)), strict=True)


def read_records(path: Path, record: Callable[[dict[str, Any]], T], what: str) -> list[T]:
    """Every complete line of PATH as a record (a torn last line is ignored); none when there is no file."""
    if not path.exists():
        return []
    try:
        lines = read_jsonl(path)
    except ValueError as error:
        raise InputError(f"{path}: not JSON Lines: {error}") from None
    records = []
    for number, line in enumerate(lines, start=1):
        if not isinstance(line, dict):
            raise InputError(f"{path}:{number}: not {what} (a JSON object)")
        try:
            records.append(record(line))
        except ValidationError as error:
            raise InputError(f"{path}:{number}: {validation_problem(error)}") from None
    return records
