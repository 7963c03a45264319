"""What a task format's importer plans: typed task rows, serialized as the task file's lines, and the collections
they need; the one staging folder name every format's documents are converted under."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from pathlib import PurePosixPath
from typing import Any

from harness.core.facts import FactRow
from harness.inputs.collections.naming import output_names

STAGING_ROOT = "documents"
"""The staging folder's name: a PDF `<stem>.pdf` becomes `documents_<stem>.md` in its collection."""


@dataclass(frozen=True)
class TaskRow:
    """One line of an imported task file (harness/inputs/tasks.py reads it back as a `Task`); its fields in the
    line's order, a None one left out."""

    id: str
    domain: str
    question: str
    answer: str
    grader: str
    type: str
    collection: str
    evidence: list[str]
    groups: dict[str, str] | None = None
    """Grouping name -> this task's value, for the report's per-group tables."""
    facts: tuple[FactRow, ...] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    """The source's own description of the item, kept as given (never read by the runner)."""
    answer_format: str | None = None
    rel_tol: float | None = None

    def to_dict(self) -> dict[str, Any]:
        line: dict[str, Any] = {}
        for spec in fields(self):
            value = getattr(self, spec.name)
            if value is None:
                continue
            line[spec.name] = [_fact(row) for row in value] if spec.name == "facts" else value
        return line


def _fact(row: FactRow) -> dict[str, Any]:
    """A fact row as a task line holds it: its schema only when it has one."""
    return {name: value for name, value in row.to_dict().items() if name != "schema" or value}


@dataclass(frozen=True)
class CollectionPlan:
    """One collection to build: the PDFs it holds (file stems in --pdf-dir) and, when the format gives the agent
    one, its index page (`index.md`)."""

    documents: tuple[str, ...]
    index: str | None = None


@dataclass
class TaskPlan:
    """A format's reading of its items: every task, the collections they name, and what the report should say."""

    tasks: list[TaskRow] = field(default_factory=list)
    collections: dict[str, CollectionPlan] = field(default_factory=dict)
    notes: Counter[str] = field(default_factory=Counter)
    """Duplicates found and how they were handled, each with its count."""


def document_files(stems: Sequence[str]) -> dict[str, str]:
    """PDF stem -> its converted file's name in a collection holding STEMS (as the collection builder names it)."""
    names = output_names([PurePosixPath(f"{stem}.pdf") for stem in stems], STAGING_ROOT)
    return {stem: names[PurePosixPath(f"{stem}.pdf")] for stem in stems}
