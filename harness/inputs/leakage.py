"""Leakage check before a run: tasks whose gold, solution or id is printed in their collection."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from harness.inputs.tasks import Task, collection_of

_CACHE_VERSION = 1
"""Bumped when what counts as a leak changes, so no run reads a cache the old rule wrote."""


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
    """Every (task, what, document) where the gold (as a whole word), the solution or the task id is printed."""
    hits: list[LeakHit] = []
    for domain, folder in collections.items():
        hits += _domain_leaks(domain, folder, [task for task in tasks if collection_of(task) == domain])
    return hits


def find_leaks_cached(
    tasks: list[Task], collections: dict[str, Path], hashes: dict[str, str], cache: Path
) -> list[LeakHit]:
    """`find_leaks`, remembered in `cache` per collection hash and task set: a 470 MB domain takes ~17 s to
    scan (bench/start_up.py), which a resume, a replay or the next model's run on it need not pay again."""
    hits: list[LeakHit] = []
    for domain, folder in collections.items():
        mine = [task for task in tasks if collection_of(task) == domain]
        key = json.dumps([_CACHE_VERSION, hashes[domain], sorted(
            [task.id, task.answer, task.solution, task.leak_allow] for task in mine
        )])  # fmt: skip
        path = cache / f"{hashlib.sha256(key.encode()).hexdigest()}.json"
        try:
            found = [LeakHit(**hit) for hit in json.loads(path.read_text())]
        except (OSError, ValueError, TypeError):  # not there yet, or unreadable: scan again
            found = _domain_leaks(domain, folder, mine)
            with contextlib.suppress(OSError):  # a cache we cannot write only costs the next run the scan
                cache.mkdir(parents=True, exist_ok=True)
                partial = path.with_suffix(f".{os.getpid()}.tmp")
                partial.write_text(json.dumps([asdict(hit) for hit in found]))
                partial.replace(path)
        hits += found
    return hits


def _domain_leaks(domain: str, folder: Path, tasks: list[Task]) -> list[LeakHit]:
    hits: list[LeakHit] = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        text = path.read_text(encoding="utf-8", errors="replace")
        document = str(path.relative_to(folder))
        for task in tasks:
            for what, needle in (("gold", task.answer), ("solution", task.solution), ("id", task.id)):
                if needle and _printed(needle, text, whole_word=what != "solution"):
                    allowed = task.leak_allow if what == "gold" else None
                    hits.append(LeakHit(domain, task.id, what, document, allowed))
    return hits


def _printed(needle: str, text: str, whole_word: bool) -> bool:
    if not whole_word:
        return needle.strip() in text
    # "42" must not match inside "1425", "4.2" or "1,42"; a sign or unit written with the gold is part of it.
    # The literal comes first and the look-behind after it, so the regex engine can scan for the literal at
    # memory speed: 7-70 times faster than a leading look-behind, which matters on a 400 MB collection
    needle = re.escape(needle.strip())
    return re.search(rf"{needle}(?<![\w.,]{needle})(?![\w]|[.,]\d)", text) is not None


def leak_summary(hits: list[LeakHit]) -> str | None:
    """One warning line for a run's start, None when nothing counts."""
    counted = [hit for hit in hits if hit.allowed is None]
    if not counted:
        return None
    tasks = sorted({f"{hit.domain}/{hit.task_id}" for hit in counted})
    shown = ", ".join(tasks[:5]) + (f" and {len(tasks) - 5} more" if len(tasks) > 5 else "")
    return (f"leakage check: {len(tasks)} tasks have their gold, solution or id printed in their collection "
            f"({shown}); see python -m harness leakage")  # fmt: skip
