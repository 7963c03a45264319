"""The task import engine, whatever the format (formats.py): check everything, build one collection per document
set the format plans from a staging folder of links to its PDFs, then write the task file of the tasks whose
collection was built and report what was skipped and why (docs/guide/tasks-and-collections.md)."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from harness.core.errors import InputError
from harness.core.json_text import json_text
from harness.core.names import check_domain_name
from harness.core.safe_text import for_terminal
from harness.inputs.collections.build import CollectionBuildRequest, ConversionOutcome, build_collection
from harness.inputs.collections.manifest import Skipped
from harness.inputs.collections.sources import source_files
from harness.inputs.importers.formats import FormatOptions, TaskFormat
from harness.inputs.importers.rows import STAGING_ROOT, TaskPlan, TaskRow
from harness.inputs.tasks import load_task_file


@dataclass(frozen=True)
class ImportRequest:
    """What every format's import is given (its own flags are its `FormatOptions`)."""

    data: list[Path]
    pdf_dir: Path
    domain: str
    tasks_dir: Path
    collections_dir: Path
    workers: int = 1


@dataclass(frozen=True)
class ImportResult:
    path: Path
    """The task file written."""
    tasks: int
    complete: bool
    """Every task imported: no PDF missing, refused or left unconverted."""


@dataclass(frozen=True)
class _Builds:
    failed: dict[str, list[Skipped]]
    """Collection name -> the sources it skipped (its tasks are left out)."""
    conversions: int


def import_tasks(
    form: TaskFormat[Any, Any], request: ImportRequest, options: FormatOptions, console: Console
) -> ImportResult:
    """Nothing is written on bad input (an InputError); a document set with a PDF missing or unconvertible skips
    its tasks, and the result says the import is not complete."""
    if request.workers < 1:
        raise InputError(f"--workers: {request.workers} is not a positive number")
    options.check()
    check_domain_name(request.domain, "--domain")
    pdf_dir = request.pdf_dir.resolve()  # the staging folder's links must not be relative to it
    if not pdf_dir.is_dir():
        raise InputError(f"--pdf-dir: {pdf_dir}: folder not found")
    items = [item for path in request.data for item in form.read(path)]
    if not items:
        raise InputError(f"{request.data[0]}: no items")
    pdfs, refused = find_pdfs(pdf_dir)
    if form.locate is not None:
        items = form.locate(items, pdfs)
    plan = form.plan(request.domain, items, options)
    missing = {name: [s for s in c.documents if s not in pdfs] for name, c in plan.collections.items()}
    missing = {name: stems for name, stems in missing.items() if stems}
    complete = [name for name in plan.collections if name not in missing]
    if not complete:
        first = next(iter(missing.values()))[0]
        raise InputError(f"--pdf-dir: {pdf_dir}: no document set is complete (e.g. {first}.pdf is missing)")
    builds = _build_all(form, request, options, plan, complete, pdfs, pdf_dir, console)
    kept = [task for task in plan.tasks if task.collection in complete and task.collection not in builds.failed]
    path = request.tasks_dir / f"{request.domain}.jsonl"
    _print_report(console, plan, kept, path, missing, builds, refused, options.describe())
    write_tasks(path, kept)
    return ImportResult(path, len(kept), not (missing or builds.failed or refused))


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
    form: TaskFormat[Any, Any],
    request: ImportRequest,
    options: FormatOptions,
    plan: TaskPlan,
    names: list[str],
    pdfs: dict[str, Path],
    pdf_dir: Path,
    console: Console,
) -> _Builds:
    """Each collection NAMES lists from a staging folder of links to its PDFs (and its index), each PDF converted
    once (by content) for every set that lists it."""
    settings = options.collection_settings()
    progress = console if console.is_terminal else Console(quiet=True)  # a pipe gets no bar's blank lines
    failed: dict[str, list[Skipped]] = {}
    converted: dict[tuple[str, str, bool, str | None], ConversionOutcome] = {}
    conversions = 0
    for name in names:
        collection = plan.collections[name]
        with tempfile.TemporaryDirectory(prefix=f"{form.name}-") as scratch:
            staging = Path(scratch) / STAGING_ROOT
            staging.mkdir()
            for stem in collection.documents:
                (staging / f"{stem}.pdf").symlink_to(pdfs[stem])  # resolved, inside --pdf-dir
            if collection.index is not None:
                (staging / "index.md").write_text(collection.index, encoding="utf-8")
            build = CollectionBuildRequest(
                staging,
                name,
                request.collections_dir / name,
                request.workers,
                prune=True,
                ocr=settings.ocr,
                links_into=(pdf_dir,),
                ocr_language=settings.ocr_language,
                converted=converted,
                page_images=settings.page_images,
            )
            report = build_collection(build, progress)
        conversions += sum(source.lower().endswith(".pdf") for source in report.conversions)
        if report.skipped:
            failed[name] = report.skipped
    return _Builds(failed, conversions)


def write_tasks(path: Path, tasks: list[TaskRow]) -> Path:
    """Staged beside the target, loaded back through the task loader, then moved into place."""
    if not tasks:
        raise InputError(f"{path}: no task could be imported")
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=".import-") as scratch:
        staged = Path(scratch) / path.name  # the loader checks the file name against the domain
        staged.write_text("".join(json_text(task.to_dict()) + "\n" for task in tasks), encoding="utf-8")
        load_task_file(staged)
        os.replace(staged, path)
    return path


def _print_report(
    console: Console,
    plan: TaskPlan,
    kept: list[TaskRow],
    path: Path,
    missing: dict[str, list[str]],
    builds: _Builds,
    refused: list[Skipped],
    settings: str,
) -> None:
    """Counts, and one line per PDF that could not be used (missing, refused, not converted) with its reason."""

    def say(text: str) -> None:
        console.print(for_terminal(text, keep_newlines=False), markup=False, highlight=False, soft_wrap=True)

    built = len(plan.collections) - len(missing) - len(builds.failed)
    said = f"; {settings}" if settings else ""
    say(f"{path}: {len(kept)} tasks over {built} collections; {builds.conversions} PDFs converted (each once){said}")
    for note, count in sorted(plan.notes.items()):
        say(f"  {note}: {count}")
    unconverted = {s.source.rsplit("/", 1)[-1]: s.reason for group in builds.failed.values() for s in group}
    for source, reason in sorted(unconverted.items()):
        say(f"  could not convert {source}: {reason}")
    for skipped in refused:
        say(f"  refused {skipped.source}: {skipped.reason}")
    absent = sorted({stem for stems in missing.values() for stem in stems})
    for stem in absent:
        say(f"  missing {stem}.pdf")
    skipped_tasks = len(plan.tasks) - len(kept)
    if skipped_tasks:
        sets = len(missing) + len(builds.failed)
        say(
            f"  skipped {skipped_tasks} tasks of {sets} document sets: {len(absent)} PDFs missing, "
            f"{len(unconverted)} not converted"
        )
