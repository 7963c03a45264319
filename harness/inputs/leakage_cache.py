"""The leakage check, remembered per (document content, task) in one cache every results folder shares.

A document is known by its content's sha256 (`CollectionFiles`), a task by the digest of what the check
looks for (its gold, solution and id, and the rule's version). The cache says, per document, which task
digests it was scanned for and which of them it prints; a start scans a document only for the tasks it
was never scanned for. So a shard, a `--limit`, a new results folder, a resume, or another model's run over
the same collection scans nothing, and a changed document alone is read again.

It is an SQLite file in the user's cache directory: two runs starting at once share it safely.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import multiprocessing
import os
import sqlite3
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from harness.inputs.collections.hashing import CollectionFiles
from harness.inputs.leakage import RULE_VERSION, LeakHit, Needles, document_text
from harness.inputs.leakage_prefilter import files_printing_any
from harness.inputs.tasks import Task, collection_of

_SCHEMA = """
CREATE TABLE IF NOT EXISTS task_sets (id INTEGER PRIMARY KEY, digests TEXT UNIQUE NOT NULL);
CREATE TABLE IF NOT EXISTS scans (document TEXT NOT NULL, task_set INTEGER NOT NULL, hits TEXT NOT NULL,
                                  PRIMARY KEY (document, task_set));
"""
_WHAT = ("gold", "solution", "id")
PARALLEL_BYTES = 64 << 20
"""Below this much to scan, one process does it (starting workers costs more than it saves)."""


def _needle_digest(task: Task) -> str:
    """What the check looks for in a task: two tasks with the same digest are found in the same documents."""
    looked_for = json.dumps([RULE_VERSION, task.answer, task.solution, task.id])
    return hashlib.sha256(looked_for.encode()).hexdigest()[:32]


def find_leaks_cached(tasks: list[Task], collections: dict[str, CollectionFiles], cache_dir: Path) -> list[LeakHit]:
    """`find_leaks`' hits, in its order, scanning only (document, task) pairs the cache has not seen."""
    cache_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.closing(sqlite3.connect(cache_dir / "leakage.sqlite", timeout=120)) as db, db:
        db.executescript(_SCHEMA)
        task_sets = {row[0]: set(json.loads(row[1])) for row in db.execute("SELECT id, digests FROM task_sets")}
        # the cache's rows read once for every collection (a document's content may be in several)
        known = _known(db, task_sets, {sha for files in collections.values() for sha in files.files.values()})
        hits: list[LeakHit] = []
        for domain, files in collections.items():
            mine = [task for task in tasks if collection_of(task) == domain]
            hits += _domain_hits(db, task_sets, known, files, mine)
    return hits


def _domain_hits(
    db: sqlite3.Connection,
    task_sets: dict[int, set[str]],
    known: dict[str, tuple[set[str], set[tuple[str, str]]]],
    files: CollectionFiles,
    tasks: list[Task],
) -> list[LeakHit]:
    """The domain's hits; `known` (what the cache knows per document) gains what this domain's scan finds."""
    digests = {task.id: _needle_digest(task) for task in tasks}
    wanted = set(digests.values())
    missing_by_document: dict[str, frozenset[str]] = {}
    for sha in set(files.files.values()):
        covered, _ = known.get(sha, (set(), set()))
        if wanted - covered:
            missing_by_document[sha] = frozenset(wanted - covered)
    for missing, documents in _grouped(missing_by_document).items():
        scanned = _scan(files, documents, [task for task in tasks if digests[task.id] in missing])
        task_set = _task_set_id(db, task_sets, missing)
        db.executemany(
            "INSERT OR REPLACE INTO scans VALUES (?, ?, ?)",
            [(sha, task_set, json.dumps(sorted(found))) for sha, found in scanned.items()],
        )
        for sha, found in scanned.items():
            covered, printed = known.setdefault(sha, (set(), set()))
            covered |= missing
            printed |= found
    hits = []
    for relative, sha in files.files.items():
        printed = known[sha][1] if sha in known else set()
        for task in tasks:
            for what in _WHAT:
                if (digests[task.id], what) in printed:
                    hits.append(
                        LeakHit(task.domain, task.id, what, relative, task.leak_allow if what == "gold" else None)
                    )
    return hits


def _known(
    db: sqlite3.Connection, task_sets: dict[int, set[str]], documents: set[str]
) -> dict[str, tuple[set[str], set[tuple[str, str]]]]:
    """Per document the cache knows: the task digests it was scanned for, and the (digest, what) it prints."""
    known: dict[str, tuple[set[str], set[tuple[str, str]]]] = {}
    for document, task_set, found in db.execute("SELECT document, task_set, hits FROM scans"):
        if document in documents and task_set in task_sets:
            covered, printed = known.setdefault(document, (set(), set()))
            covered |= task_sets[task_set]
            printed |= {(digest, what) for digest, what in json.loads(found)}
    return known


def _grouped(missing_by_document: dict[str, frozenset[str]]) -> dict[frozenset[str], set[str]]:
    """Documents by the task digests they still need a scan for (one automaton per group; mostly one)."""
    groups: dict[frozenset[str], set[str]] = defaultdict(set)
    for sha, missing in missing_by_document.items():
        groups[missing].add(sha)
    return groups


def _scan(files: CollectionFiles, documents: set[str], tasks: list[Task]) -> dict[str, set[tuple[str, str]]]:
    """The (task digest, what) each of DOCUMENTS prints, each read once (the first file with that content);
    documents ripgrep says print no needle at all are not read again."""
    items, taken = [], set()
    for relative, sha in files.files.items():
        if sha in documents and sha not in taken:
            items.append((relative, sha))
            taken.add(sha)
    listed = files_printing_any(files.root, tasks)
    if listed is not None:
        found: dict[str, set[tuple[str, str]]] = {sha: set() for relative, sha in items if relative not in listed}
        items = [(relative, sha) for relative, sha in items if relative in listed]
        return found | _scan_items(files.root, items, tasks)
    return _scan_items(files.root, items, tasks)


def _scan_items(root: Path, items: list[tuple[str, str]], tasks: list[Task]) -> dict[str, set[tuple[str, str]]]:
    """The exact scan of ITEMS; a large one spread over the cores (the matcher holds the GIL: processes)."""
    sizes = [(root / relative).stat().st_size for relative, _ in items]
    workers = min(os.cpu_count() or 1, 8)
    if workers == 1 or sum(sizes) < PARALLEL_BYTES:
        return _scan_files(root, items, tasks)
    chunks: list[list[tuple[str, str]]] = [[] for _ in range(4 * workers)]
    loads = [0] * len(chunks)
    for item, size in sorted(zip(items, sizes, strict=True), key=lambda pair: -pair[1]):
        lightest = loads.index(min(loads))
        chunks[lightest].append(item)
        loads[lightest] += size
    found: dict[str, set[tuple[str, str]]] = {}
    context = multiprocessing.get_context("spawn")  # no fork of a process that may hold threads and locks
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            for part in pool.map(_scan_files, [root] * len(chunks), chunks, [tasks] * len(chunks)):
                found |= part
    except BrokenProcessPool:  # workers cannot start here (a main script they cannot import): one process
        return _scan_files(root, items, tasks)
    return found


def _scan_files(root: Path, items: list[tuple[str, str]], tasks: list[Task]) -> dict[str, set[tuple[str, str]]]:
    needles = Needles(tasks)
    found = {}
    for relative, sha in items:
        text = document_text(root / relative)
        found[sha] = (
            set() if text is None else {(_needle_digest(task), what) for task, what in needles.printed_in(text)}
        )
    return found


def _task_set_id(db: sqlite3.Connection, task_sets: dict[int, set[str]], digests: frozenset[str]) -> int:
    text = json.dumps(sorted(digests))
    db.execute("INSERT OR IGNORE INTO task_sets (digests) VALUES (?)", (text,))
    (task_set,) = db.execute("SELECT id FROM task_sets WHERE digests = ?", (text,)).fetchone()
    task_sets[task_set] = set(digests)
    return int(task_set)
