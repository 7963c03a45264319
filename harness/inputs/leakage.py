"""Leakage check before a run: tasks whose gold, solution or id is printed in their collection."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import ahocorasick

from harness.inputs.tasks import Task, collection_of

RULE_VERSION = 2
"""Bumped when what counts as a leak changes, so no run reads a cache the old rule wrote (2: pictures, the page
images and figures of `--page-images`, are no longer read as text)."""

_PICTURES = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"\0\0\0\x0cjP  ", b"II*\0", b"MM\0*")
"""How a picture's bytes start: PNG, JPEG, GIF, JPEG 2000, TIFF (and WebP, a RIFF file of kind WEBP)."""


@dataclass(frozen=True)
class LeakHit:
    """A task's gold, solution or id found verbatim in a document of its collection."""

    domain: str
    task_id: str
    what: str
    """gold, solution or id."""
    document: str
    allowed: str | None
    """The task's `leak_allow` reason when the hit is its gold; None when the hit counts."""


def find_leaks(tasks: list[Task], collections: dict[str, Path]) -> list[LeakHit]:
    """Every (task, what, document) where the gold (as a whole word), the solution or the task id is printed;
    `collections` maps each collection name (harness/inputs/tasks.py's `collection_of`) to its folder."""
    hits: list[LeakHit] = []
    for name, folder in collections.items():
        hits += _collection_leaks(folder, [task for task in tasks if collection_of(task) == name])
    return hits


def _collection_leaks(folder: Path, tasks: list[Task]) -> list[LeakHit]:
    needles = Needles(tasks)
    hits: list[LeakHit] = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        text = document_text(path)
        if text is None:
            continue
        document = str(path.relative_to(folder))
        for task, what in needles.printed_in(text):
            allowed = task.leak_allow if what == "gold" else None
            hits.append(LeakHit(task.domain, task.id, what, document, allowed))
    return hits


def document_text(path: Path) -> str | None:
    """A document's text as the agent's tools print it; None for a picture (a page image, a figure), whose
    compressed bytes print nothing a reader would take for a gold (a choice gold `D` is in most of them). A
    picture's text, where the collection has it, is its document's Markdown (the PDF's text layer, or OCR with
    `--ocr`), checked as text. Other binary files are read as text still: `cat` prints what they hold."""
    data = path.read_bytes()
    if data.startswith(_PICTURES) or (data[:4] == b"RIFF" and data[8:12] == b"WEBP"):
        return None
    return data.decode("utf-8", errors="replace")


_WORD_BEFORE = re.compile(r"[\w.,]")
_WORD_AFTER = re.compile(r"\w|[.,]\d")
r"""A gold or id counts only as a whole word or number: "42" is not printed in "1425", "4.2", "1,42" or "42.5"
(a sign or unit written with the gold is part of it). The boundary rule of the regex it replaces,
`needle(?<![\w.,]needle)(?![\w]|[.,]\d)`, as two one-character checks around each verbatim occurrence."""


class Needles:
    """Every task's gold, solution and id (each stripped) in one Aho-Corasick automaton, so a document is
    read once for all of its domain's tasks: the scan grows with the bytes, not with tasks × bytes."""

    def __init__(self, tasks: list[Task]) -> None:
        # One entry per (task, what) in the order the hits are listed: task by task, gold, solution, id.
        self.entries: list[tuple[Task, str, bool]] = []
        self.blank: list[int] = []
        """Entries whose needle is only whitespace (load_task_file refuses them; a Task built in code may not)."""
        groups: dict[str, list[int]] = {}
        for task in tasks:
            for what, needle in (("gold", task.answer), ("solution", task.solution), ("id", task.id)):
                if not needle:
                    continue
                index = len(self.entries)
                self.entries.append((task, what, what != "solution"))
                if needle.strip():
                    groups.setdefault(needle.strip(), []).append(index)
                else:
                    self.blank.append(index)
        self.automaton = ahocorasick.Automaton()
        for needle, indices in groups.items():
            self.automaton.add_word(needle, (len(needle), indices))
        if groups:
            self.automaton.make_automaton()

    def printed_in(self, text: str) -> list[tuple[Task, str]]:
        """The (task, what) printed in `text`, in entry order."""
        found = {index for index in self.blank if self._blank_printed(index, text)}
        pending = len(self.entries) - len(found)
        if pending and len(self.automaton):
            for last, (length, indices) in self.automaton.iter(text):
                first = last - length + 1
                whole = None  # whether this occurrence stands as a whole word, worked out at most once
                for index in indices:
                    if index in found:
                        continue
                    if self.entries[index][2]:
                        if whole is None:
                            whole = _whole_word(text, first, last)
                        if not whole:
                            continue
                    found.add(index)
                    pending -= 1
                if not pending:
                    break
        return [self.entries[index][:2] for index in sorted(found)]

    def _blank_printed(self, index: int, text: str) -> bool:
        # The rule with an empty needle: a solution is in every text, a gold or id wherever a word may start
        return not self.entries[index][2] or re.search(r"(?<![\w.,])(?![\w]|[.,]\d)", text) is not None


def _whole_word(text: str, first: int, last: int) -> bool:
    """Whether the occurrence text[first : last + 1] stands as a whole word or number."""
    return (first == 0 or not _WORD_BEFORE.match(text, first - 1)) and not _WORD_AFTER.match(text, last + 1)


def leak_summary(hits: list[LeakHit]) -> str | None:
    """One warning line for a run's start, None when nothing counts."""
    counted = [hit for hit in hits if hit.allowed is None]
    if not counted:
        return None
    tasks = sorted({f"{hit.domain}/{hit.task_id}" for hit in counted})
    shown = ", ".join(tasks[:5]) + (f" and {len(tasks) - 5} more" if len(tasks) > 5 else "")
    return (
        f"leakage check: {len(tasks)} tasks have their gold, solution or id printed in their collection "
        f"({shown}); see python -m harness leakage"
    )
