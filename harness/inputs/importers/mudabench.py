"""MuDABench items to tasks, one collection per distinct document set (docs/GRADERS.md §6).

Pure planning: read and check the data, name tasks and document sets, and count every kind of duplicate.
Building the collections and writing files is the import engine's job (engine.py).

Counted as MuDABench's evaluation (eval/evaluate.py) counts: every item is a task, identical ones too (its
loop judges each listing, so an identical item counts twice); every metadata entry of an item with atomic
facts is one fact row, a document listed twice giving two; a row's columns are its `value_*` and `detail_*`
fields named `values.<name>` and `details.<name>` (the schema's when it names any), or `fact_type` for an
entry with none (`_pick_atomic_fact_keys`, `metadata_entry_to_source_row`, `build_row_metric_columns`).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.core.errors import InputError, read_text_input
from harness.core.facts import FactRow, parse_facts
from harness.inputs.importers.formats import CollectionSettings, TaskFormat, option
from harness.inputs.importers.rows import CollectionPlan, TaskPlan, TaskRow, document_files

_INDEX_FIELDS = ("symbol", "year", "doctype")
"""What the collection's index tells the agent about each document; never the gold `value_*` facts."""
_PREFIXES = {"value_": "values.", "detail_": "details."}
"""A metadata entry's gold cells are its `value_*` and `detail_*` fields (MuDABench's atomic facts), named as
MuDABench names its metric columns."""
_UNSCORED_DETAILS = {
    "aligned_from_span",
    "span_role",
    "source_span_years",
    "source_span_fact_type",
    "paired_year",
    "year_source",
}
"""MuDABench's `SCORABLE_DETAIL_EXCLUDE_KEYS`: details it never scores."""
_SOURCE_FIELDS = ("symbol", "year", "doctype", "id")


@dataclass(frozen=True)
class Document:
    id: str
    """The PDF's file stem in --pdf-dir."""
    symbol: str
    year: str
    doctype: str


@dataclass(frozen=True)
class MudaItem:
    split: str
    """The data file's stem (`simple`, `complex`)."""
    number: int
    question_id: str | None
    question: str
    documents: tuple[Document, ...]
    final_answer: str
    source_answer: tuple[str, ...]
    cells: tuple[tuple[str, dict[str, Any], dict[str, str], dict[str, Any]], ...] = ()
    """Per metadata entry: its document id, its cells, their `schema` text and the entry's own description
    of its document (symbol, year, doctype, id as given); no entry has cells when none has atomic facts."""

    @property
    def document_set(self) -> tuple[str, ...]:
        return tuple(sorted(document.id for document in self.documents))

    @property
    def content_key(self) -> str:
        """Identical items have the same question, document set and answer (whatever their ids)."""
        return _digest([self.question, *self.document_set, "", self.final_answer])


def _digest(parts: list[str]) -> str:
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def read_items(path: Path) -> list[MudaItem]:
    """Every item of one data file, checked; the first problem is an `InputError` naming file, item and field."""
    try:
        data = json.loads(read_text_input(path, "data"))
    except json.JSONDecodeError as error:
        raise InputError(f"{path}:{error.lineno}: malformed JSON: {error.msg}") from None
    if not isinstance(data, list):
        raise InputError(f"{path}: MuDABench data is a JSON list of items")
    return [_item(path, number, raw) for number, raw in enumerate(data, start=1)]


def _item(path: Path, number: int, raw: Any) -> MudaItem:
    where = f"{path}: item {number}"
    if not isinstance(raw, dict):
        raise InputError(f"{where}: an item must be a JSON object")
    for name in ("question", "final_answer"):
        if not isinstance(raw.get(name), str) or not raw[name].strip():
            raise InputError(f"{where}: field '{name}': must be a non-empty string")
    metadata = raw.get("metadata")
    if not isinstance(metadata, list) or not metadata:
        raise InputError(f"{where}: field 'metadata': must be a non-empty list")
    documents = tuple(_document(f"{where}: field 'metadata[{index}]'", entry) for index, entry in enumerate(metadata))
    cells = tuple(_cells(f"{where}: field 'metadata[{index}]'", entry) for index, entry in enumerate(metadata))
    if not any(_fact_keys(entry) for entry in metadata):
        cells = ()  # MuDABench judges such an item by its legacy question-wise prompt: no fact rows
    sources = raw.get("source_answer") or []
    if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
        raise InputError(f"{where}: field 'source_answer': must be a list of strings")
    question_id = raw.get("question_id")
    if question_id is not None and (not isinstance(question_id, (str, int)) or isinstance(question_id, bool)):
        raise InputError(f"{where}: field 'question_id': must be a string or an integer")
    return MudaItem(
        path.stem,
        number,
        None if question_id is None else str(question_id).strip() or None,
        raw["question"].strip(),
        documents,
        raw["final_answer"].strip(),
        tuple(sources),
        cells,
    )


def _document(where: str, entry: Any) -> Document:
    if not isinstance(entry, dict):
        raise InputError(f"{where}: must be a JSON object")
    doc_id = entry.get("id")
    if not isinstance(doc_id, str) or not doc_id.strip() or "/" in doc_id or doc_id.startswith("."):
        raise InputError(f"{where}: field 'id': must be a file stem (no '/', no leading '.')")
    facts = {}
    for name in _INDEX_FIELDS:
        value = entry.get(name)
        if not isinstance(value, (str, int)) or isinstance(value, bool) or not str(value).strip():
            raise InputError(f"{where}: field '{name}': must be a non-empty string or integer")
        facts[name] = str(value).strip()
    return Document(doc_id.strip(), facts["symbol"], facts["year"], facts["doctype"])


def _fact_keys(entry: dict[str, Any]) -> list[str]:
    """The entry's atomic fact fields: the schema's `value_*`/`detail_*` names, or else the entry's own."""
    schema = entry.get("schema")
    names = [name for name in schema if name.startswith(tuple(_PREFIXES))] if isinstance(schema, dict) else []
    return sorted(set(names or [name for name in entry if name.startswith(tuple(_PREFIXES))]))


def _column(name: str) -> str | None:
    """`value_x` -> `values.x`, `detail_y` -> `details.y`; None for a detail MuDABench never scores."""
    prefix = next(prefix for prefix in _PREFIXES if name.startswith(prefix))
    rest = name[len(prefix) :]
    return None if prefix == "detail_" and rest in _UNSCORED_DETAILS else _PREFIXES[prefix] + rest


def _cells(where: str, entry: dict[str, Any]) -> tuple[str, dict[str, Any], dict[str, str], dict[str, Any]]:
    """The entry's gold cells, checked as a task's facts are (a bad value is this item's one-line error)."""
    schema = entry.get("schema") or {}
    if not isinstance(schema, dict):
        raise InputError(f"{where}: field 'schema': must be an object of field -> description")
    cells: dict[str, Any] = {}
    described: dict[str, str] = {}
    for name in _fact_keys(entry):
        column = _column(name)
        if column is None or name not in entry:
            continue
        cells[column] = entry[name]
        if name in schema:
            described[column] = str(schema[name])
    if not cells:  # MuDABench's `fact_type` column of a row without values: the derived type
        cells = {"fact_type": "atomic_metadata"}
    source = {name: entry[name] for name in _SOURCE_FIELDS if entry.get(name) is not None}
    parse_facts([{"document": entry["id"], "cells": cells, "schema": described, "source": source}], where)
    return str(entry["id"]).strip(), cells, described, source


def _collection_name(domain: str, documents: tuple[Document, ...]) -> str:
    """`<domain>-<years>-<n>docs-<hash>`: readable from the metadata, unique by the document set."""
    years = sorted({document.year for document in documents})
    span = years[0] if len(years) == 1 else f"{years[0]}-{years[-1]}"
    digest = _digest(sorted(document.id for document in documents))[:8]
    return f"{domain[:30]}-{span[:9]}-{len(documents)}docs-{digest}"


def plan_import(domain: str, items: list[MudaItem], options: MudaOptions | None = None) -> TaskPlan:
    """Every item a task (identical ones too), one collection per distinct document set with its index page."""
    plan = TaskPlan()
    seen_content: set[str] = set()
    content_of: dict[str, str] = {}
    first_of: dict[str, str] = {}
    """Content -> the task id of its first listing."""
    ids: set[str] = set()
    splits_of_id: dict[str, set[str]] = {}
    sets_of_question: dict[str, set[tuple[str, ...]]] = {}
    pool = {document.id: document for item in items for document in item.documents}
    for item in items:
        if item.content_key in seen_content:
            plan.notes["identical items kept as tasks of their own (MuDABench's evaluation counts each)"] += 1
        seen_content.add(item.content_key)
        documents = _unique_documents(item, plan)
        noise = _noise(documents, pool, options) if options is not None and options.noise_fraction else ()
        name = _collection_name(domain, documents) + (
            f"-noise{len(noise)}s{options.noise_seed}" if options and noise else ""
        )
        if name not in plan.collections:
            listed = tuple(sorted((*documents, *noise), key=lambda document: document.id))
            plan.collections[name] = CollectionPlan(tuple(d.id for d in listed), _index_markdown(listed))
        base = item.question_id or "q" + item.content_key[:12]  # never the question text alone
        if item.question_id:
            splits_of_id.setdefault(item.question_id, set()).add(item.split)
        task_id = f"{item.split}-{base}"
        if task_id in ids:
            if content_of[task_id] != item.content_key:
                plan.notes["repeated question_id with other content (suffixed -2, -3, ...)"] += 1
            task_id = next(f"{task_id}-{n}" for n in range(2, len(items) + 2) if f"{task_id}-{n}" not in ids)
        ids.add(task_id)
        content_of[task_id] = item.content_key
        sets_of_question.setdefault(item.question, set()).add(item.document_set)
        files = document_files([d.id for d in (*documents, *noise)])
        task = _task(domain, task_id, item, name, {d.id: files[d.id] for d in documents})
        if options is not None and noise:
            task.metadata["noise"] = {
                "documents": [d.id for d in noise],
                "fraction": options.noise_fraction,
                "seed": options.noise_seed,
            }
            plan.notes[
                f"tasks whose collection has irrelevant documents added (--noise, seed {options.noise_seed})"
            ] += 1
        if item.content_key in first_of:
            task.metadata["identical_to"] = first_of[item.content_key]
        first_of.setdefault(item.content_key, task_id)
        plan.tasks.append(task)
    plan.notes["question ids in more than one split (kept apart by the split prefix)"] += sum(
        len(splits) > 1 for splits in splits_of_id.values()
    )
    plan.notes["same question over different document sets (separate tasks and collections)"] += sum(
        len(sets) > 1 for sets in sets_of_question.values()
    )
    plan.notes["tasks sharing a collection with another task"] += len(plan.tasks) - len(
        {task.collection for task in plan.tasks}
    )
    plan.notes = Counter({note: count for note, count in plan.notes.items() if count})
    return plan


def _noise(documents: tuple[Document, ...], pool: dict[str, Document], options: MudaOptions) -> tuple[Document, ...]:
    """ceil(fraction x |D|) documents of the import that are not in the set, drawn by a generator seeded with the
    seed and the set (so a set gets the same ones whatever else is imported with it, as long as the pool is
    the same), in id order."""
    mine = {document.id for document in documents}
    others = sorted(doc_id for doc_id in pool if doc_id not in mine)
    wanted = min(len(others), math.ceil(options.noise_fraction * len(documents) - 1e-9))
    chosen = random.Random(f"{options.noise_seed}:{','.join(sorted(mine))}").sample(others, wanted)
    return tuple(pool[doc_id] for doc_id in sorted(chosen))


def _unique_documents(item: MudaItem, plan: TaskPlan) -> tuple[Document, ...]:
    unique = {document.id: document for document in item.documents}
    if len(unique) != len(item.documents):
        plan.notes["documents listed twice in one item (one file, a fact row per listing)"] += 1
    return tuple(unique[doc_id] for doc_id in sorted(unique))


def _task(domain: str, task_id: str, item: MudaItem, collection: str, files: dict[str, str]) -> TaskRow:
    """The gold is the reference answer for the judge; the per-document `value_*` cells are the task's facts (out
    of the sandbox and the index); the evidence is the set's document files."""
    by_id = {document.id: document for document in item.documents}
    facts = tuple(
        FactRow(files[doc_id], cells, by_id[doc_id].symbol, by_id[doc_id].year, schema, source)
        for doc_id, cells, schema, source in item.cells
    )
    return TaskRow(
        id=task_id,
        domain=domain,
        question=item.question,
        answer=item.final_answer,
        grader="judge",
        type=item.split,
        collection=collection,
        evidence=sorted(set(files.values())),
        facts=facts,
        metadata={
            "source": "mudabench",
            "split": item.split,
            "item": item.number,
            "question_id": item.question_id,
            "documents": list(item.document_set),
            "source_answer": list(item.source_answer),
        },
    )


def _index_markdown(documents: tuple[Document, ...]) -> str:
    """Which converted file is which company, year and kind of report: the only metadata the agent gets."""
    names = document_files([document.id for document in documents])
    lines = ["# Documents in this collection", "", "| file | symbol | year | doctype |", "|---|---|---|---|"]
    for document in documents:
        cells = [names[document.id], document.symbol, document.year, document.doctype]
        lines.append("| " + " | ".join(cell.replace("|", "/") for cell in cells) + " |")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class MudaOptions:
    ocr: bool = field(default=False, metadata=option("--ocr", "read PDF pages without a text layer by OCR (Tesseract)"))
    ocr_lang: str | None = field(
        default=None,
        metadata=option(
            "--ocr-lang",
            "Tesseract languages for --ocr, e.g. chi_sim+eng for MuDABench's Chinese reports (default: eng)",
            "LANGS",
        ),
    )

    noise: str | None = field(
        default=None,
        metadata=option(
            "--noise",
            "add ceil(FRACTION x |D|) irrelevant documents from the other sets to each set's collection, as the "
            "paper's noise test (0.5); the tasks' evidence and facts stay the set's",
            "FRACTION",
        ),
    )
    noise_seed: int = field(default=0, metadata=option("--noise-seed", "the seed of --noise's draw (default 0)", "N"))

    @property
    def noise_fraction(self) -> float:
        return float(self.noise) if self.noise else 0.0

    def check(self) -> None:
        if self.noise is not None:
            try:
                fraction = float(self.noise)
            except ValueError:
                fraction = -1.0
            if not (math.isfinite(fraction) and fraction > 0):
                raise InputError(f"--noise: {self.noise!r} is not a fraction above 0 of each set's documents")
        if self.ocr_lang is None:
            return
        from harness.inputs.collections.pdf import missing_ocr_languages

        if not self.ocr:
            raise InputError("--ocr-lang: only with --ocr")
        if not re.fullmatch(r"[a-z][a-z_]*(\+[a-z][a-z_]*)*", self.ocr_lang):
            raise InputError(f"--ocr-lang: {self.ocr_lang!r} is not a Tesseract language list (e.g. chi_sim+eng)")
        missing = missing_ocr_languages(self.ocr_lang)
        if missing:
            raise InputError(
                f"--ocr-lang: no Tesseract data for {', '.join(missing)} (e.g. Debian's tesseract-ocr-chi-sim)"
            )

    def collection_settings(self) -> CollectionSettings:
        return CollectionSettings(ocr=self.ocr, ocr_language=self.ocr_lang)

    def describe(self) -> str:
        return ""


FORMAT = TaskFormat(
    name="mudabench",
    help="MuDABench data/simple.json or complex.json and its PDFs: judge-graded tasks, one collection per document set",
    data_help="MuDABench data files (one per split)",
    pdf_names="<metadata id>.pdf",
    options=MudaOptions,
    read=read_items,
    plan=plan_import,
    data_metavar="DATA_JSON",
)
