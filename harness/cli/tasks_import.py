"""`python -m harness tasks import mudabench DATA_JSON... --pdf-dir DIR --domain NAME`: check everything, build
one collection per document set with the collection builder, then write the task file (docs/GRADERS.md §6)."""

from __future__ import annotations

import dataclasses
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from harness.cli.command import EXIT_FAILED, EXIT_OK
from harness.core.errors import InputError
from harness.core.json_text import json_text
from harness.core.names import check_domain_name
from harness.core.safe_text import for_terminal
from harness.inputs.collections.build import BuildRequest, Outcome, build_collection
from harness.inputs.collections.manifest import Skipped
from harness.inputs.collections.sources import source_files
from harness.inputs.importers.mudabench import (
    STAGING_ROOT,
    Document,
    ImportPlan,
    document_files,
    plan_import,
    read_items,
)
from harness.inputs.tasks import load_task_file


@dataclass(frozen=True)
class ImportRequest:
    data: list[Path]
    pdf_dir: Path
    domain: str
    tasks_dir: Path
    collections_dir: Path
    workers: int = 1
    ocr: bool = False
    ocr_language: str | None = None


def run_mudabench_import(request: ImportRequest, console: Console) -> int:
    """EXIT_OK: every task imported; EXIT_FAILED: some skipped (missing PDFs, documents the builder could not
    convert)."""
    check_domain_name(request.domain, "--domain")
    # against the working directory, as every CLI path: the staging folder's links must not be relative
    request = dataclasses.replace(request, pdf_dir=request.pdf_dir.absolute())
    if not request.pdf_dir.is_dir():
        raise InputError(f"--pdf-dir: {request.pdf_dir}: folder not found")
    items = [item for path in request.data for item in read_items(path)]
    if not items:
        raise InputError(f"{request.data[0]}: no items")
    plan = plan_import(request.domain, items)
    pdfs, refused = find_pdfs(request.pdf_dir)
    missing = {name: [d.id for d in docs if d.id not in pdfs] for name, docs in plan.collections.items()}
    missing = {name: ids for name, ids in missing.items() if ids}
    built = {name: docs for name, docs in plan.collections.items() if name not in missing}
    if not built:
        first = next(iter(missing.values()))[0]
        raise InputError(f"--pdf-dir: {request.pdf_dir}: no document set is complete (e.g. {first}.pdf is missing)")
    failed, conversions = _build_all(request, built, pdfs, console)
    kept = [task for task in plan.tasks if task["collection"] in built and task["collection"] not in failed]
    path = request.tasks_dir / f"{request.domain}.jsonl"
    _print_report(console, plan, kept, path, missing, failed, refused, conversions)
    write_tasks(path, kept)
    return EXIT_FAILED if missing or failed or refused else EXIT_OK


def find_pdfs(pdf_dir: Path) -> tuple[dict[str, Path], list[Skipped]]:
    """PDF file stem -> the file to read, anywhere under the folder (the first in name order when a stem
    repeats); and the PDFs refused (a link out of the folder, a special file: sources.py), with the reason."""
    files, refused = source_files(pdf_dir)
    found: dict[str, Path] = {}
    for file in files:
        if file.relative.suffix.lower() == ".pdf":
            found.setdefault(file.relative.stem, file.path)
    return found, [skipped for skipped in refused if skipped.source.lower().endswith(".pdf")]


def _build_all(
    request: ImportRequest, collections: dict[str, tuple[Document, ...]], pdfs: dict[str, Path], console: Console
) -> tuple[dict[str, list[Skipped]], int]:
    """Each collection from a staging folder of links to its PDFs plus its index, each PDF converted once (by
    content) for every set that lists it; name -> the sources it skipped, and the conversions made."""
    failed: dict[str, list[Skipped]] = {}
    converted: dict[tuple[str, str, bool, str | None], Outcome] = {}
    conversions = 0
    for name, documents in collections.items():
        with tempfile.TemporaryDirectory(prefix="mudabench-") as scratch:
            staging = Path(scratch) / STAGING_ROOT
            staging.mkdir()
            for document in documents:
                (staging / f"{document.id}.pdf").symlink_to(pdfs[document.id])  # resolved, inside --pdf-dir
            (staging / "index.md").write_text(_index_markdown(documents), encoding="utf-8")
            request_ = BuildRequest(
                staging,
                name,
                request.collections_dir / name,
                request.workers,
                prune=True,
                ocr=request.ocr,
                links_into=(request.pdf_dir,),
                ocr_language=request.ocr_language,
                converted=converted,
            )
            report = build_collection(request_, console)
        conversions += sum(source.lower().endswith(".pdf") for source in report.conversions)
        if report.skipped:
            failed[name] = report.skipped
    return failed, conversions


def _index_markdown(documents: tuple[Document, ...]) -> str:
    """Which converted file is which company, year and kind of report: the only metadata the agent gets."""
    names = document_files(documents)
    lines = ["# Documents in this collection", "", "| file | symbol | year | doctype |", "|---|---|---|---|"]
    for document in documents:
        cells = [names[document.id], document.symbol, document.year, document.doctype]
        lines.append("| " + " | ".join(cell.replace("|", "/") for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def write_tasks(path: Path, tasks: list[dict[str, object]]) -> Path:
    """Staged beside the target, loaded back through the task loader, then moved into place."""
    if not tasks:
        raise InputError(f"{path}: no task could be imported")
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".import-") as scratch:
        staged = Path(scratch) / path.name  # the loader checks the file name against the domain
        staged.write_text("".join(json_text(task) + "\n" for task in tasks), encoding="utf-8")
        load_task_file(staged)
        os.replace(staged, path)
    return path


def _print_report(
    console: Console,
    plan: ImportPlan,
    kept: list[dict[str, object]],
    path: Path,
    missing: dict[str, list[str]],
    failed: dict[str, list[Skipped]],
    refused: list[Skipped],
    conversions: int,
) -> None:
    """Counts, and one line per PDF that could not be used (missing, refused, not converted) with its reason."""

    def say(text: str) -> None:
        console.print(for_terminal(text, keep_newlines=False), markup=False, highlight=False, soft_wrap=True)

    built = len(plan.collections) - len(missing) - len(failed)
    say(f"{path}: {len(kept)} tasks over {built} collections; {conversions} PDFs converted (each once)")
    for note, count in sorted(plan.notes.items()):
        say(f"  {note}: {count}")
    unconverted = {skipped.source.rsplit("/", 1)[-1]: skipped.reason for group in failed.values() for skipped in group}
    for source, reason in sorted(unconverted.items()):
        say(f"  could not convert {source}: {reason}")
    for skipped in refused:
        say(f"  refused {skipped.source}: {skipped.reason}")
    absent = sorted({doc_id for ids in missing.values() for doc_id in ids})
    for doc_id in absent:
        say(f"  missing {doc_id}.pdf")
    skipped_tasks = len(plan.tasks) - len(kept)
    if skipped_tasks:
        sets = len(missing) + len(failed)
        say(
            f"  skipped {skipped_tasks} tasks of {sets} document sets: {len(absent)} PDFs missing, "
            f"{len(unconverted)} not converted"
        )
