"""`collection build`: every supported file under SRC_DIR to one Markdown file in the collection, in
parallel processes, converting only what changed since the last build (same source sha256 and converter
version: kept). Archives in SRC_DIR are opened and their documents built (archives.py). Skipped files are
listed with their reason (links out of SRC_DIR and special files among them: sources.py); nothing is deleted
unless `prune`."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import re
import shutil
import tempfile
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from harness.core.bounded import Stopped, bounded_map, ran_out_of_memory
from harness.core.errors import InputError
from harness.core.writable import check_writable_folder
from harness.inputs.collections.archives import ArchiveBounds, expand_archives
from harness.inputs.collections.conversion import Conversion, Unconvertible, output_too_large
from harness.inputs.collections.convert import convert, converter, sniffed_format, source_format
from harness.inputs.collections.hashing import collection_hash, file_sha256
from harness.inputs.collections.limits import ConversionLimits, stopped_reason
from harness.inputs.collections.manifest import (
    Entry,
    Manifest,
    OpenedArchive,
    Skipped,
    manifest_path,
    read_manifest,
    write_bytes_atomic,
    write_manifest,
)
from harness.inputs.collections.naming import output_names
from harness.inputs.collections.page_render import render_pictures
from harness.inputs.collections.pdf_images import IMAGES_SUFFIX, MAX_DPI, images_folder
from harness.inputs.collections.sources import SourceFile, source_files
from harness.inputs.collections.tokens import tokenizer

_DOMAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


@dataclass
class CollectionBuildRequest:
    source_dir: Path
    domain: str
    out: Path
    workers: int = 1
    prune: bool = False
    ocr: bool = False
    links_into: tuple[Path, ...] = ()
    """Folders besides SRC_DIR a link in it may resolve into (the MuDABench import's staged links)."""
    ocr_language: str | None = None
    """Tesseract's languages for --ocr (`chi_sim+eng`); None: English."""
    converted: dict[tuple[str, str, bool, str | None], ConversionOutcome] | None = None
    """Conversions this process already made, by (source sha256, format, ocr, language): a source met again (a
    PDF in several MuDABench document sets) is not converted again. None: no sharing."""
    limits: ConversionLimits = field(default_factory=ConversionLimits)
    """Memory, time and Markdown size each conversion may take; past one, the document is skipped."""
    archives: ArchiveBounds = field(default_factory=ArchiveBounds)
    """Members, bytes and compression ratio an archive in SRC_DIR may have; past one, it is not opened."""
    page_images: int | None = None
    """Keep each PDF's pages as PNG at this many dots per inch, and its embedded figures, beside its Markdown
    (`pdf_images.py`); None: Markdown only."""


@dataclass
class _BuildReport:
    converted: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    archives: list[OpenedArchive] = field(default_factory=list)
    """The archives in SRC_DIR this build opened (their documents' sources are `archive/member`)."""
    notes: list[tuple[str, str]] = field(default_factory=list)
    """(source, note) of the collection's documents, converted now or kept unchanged: what their conversion changed
    or could not keep (an encoding read, a formula without a value), shown on the console as in the manifest."""
    pruned: list[str] = field(default_factory=list)
    conversions: list[str] = field(default_factory=list)
    """Sources this build converted (not kept unchanged, not taken from `CollectionBuildRequest.converted`)."""
    manifest: Path | None = None
    hash: str = ""


@dataclass(frozen=True)
class _Job:
    source: str
    path: Path
    fmt: str
    name: str
    sha256: str
    notes: tuple[str, ...] = ()
    """What the build says of this source before converting it (a name shown escaped: sources.py)."""


@dataclass
class ConversionOutcome:
    job: _Job
    conversion: Conversion | None
    reason: str | None
    tokens: int = 0


def _check_request(request: CollectionBuildRequest) -> None:
    """Every check on the input, before anything is written."""
    if not _DOMAIN_NAME.fullmatch(request.domain):
        raise InputError(f"--domain: {request.domain!r} is not a domain name (letters, digits, _ and -)")
    if not request.source_dir.is_dir():
        raise InputError(f"{request.source_dir}: source folder not found")
    if request.workers < 1:
        raise InputError(f"--workers: {request.workers} is not a positive number")
    limits = request.limits
    for flag, value in (
        ("--max-memory", limits.memory_mb),
        ("--max-time", limits.seconds),
        ("--max-output", limits.output_mb),
    ):
        if value <= 0:
            raise InputError(f"{flag}: {value:g} is not a positive number")
    if request.page_images is not None and not 0 < request.page_images <= MAX_DPI:
        raise InputError(f"--page-images: {request.page_images} dpi is not between 1 and {MAX_DPI}")
    check_writable_folder(request.out, "--out")
    source, out = request.source_dir.resolve(), request.out.resolve()
    if out == source or out.is_relative_to(source) or source.is_relative_to(out):
        raise InputError(f"{request.out}: the collection and the source folder {request.source_dir} must not nest")


def build_collection(request: CollectionBuildRequest, console: Console) -> _BuildReport:
    _check_request(request)
    # archives are unpacked here for the build's length, outside the collection and the source folder
    with tempfile.TemporaryDirectory(prefix="harness-archives-") as scratch:
        return _build(request, console, Path(scratch))


def _build(request: CollectionBuildRequest, console: Console, scratch: Path) -> _BuildReport:
    out, report = request.out, _BuildReport()
    previous = read_manifest(manifest_path(out))
    previous_entries = {entry.name: entry for entry in previous.documents} if previous else {}
    jobs, report.skipped, report.archives = _plan(request, scratch)
    if not jobs and not report.skipped:
        raise InputError(f"{request.source_dir}: no files to build from (hidden files and folders are ignored)")
    out.mkdir(parents=True, exist_ok=True)
    entries: dict[str, Entry] = {}
    pending = []
    for job in jobs:
        entry = previous_entries.get(job.name)
        if entry and _unchanged(entry, job, out, request):
            entries[job.name] = entry
            report.unchanged.append(job.name)
            report.notes += [(job.source, note) for note in entry.notes]  # said again: they still hold
        else:
            pending.append(job)
    known = request.converted if request.converted is not None else {}
    reused = [_reused(job, known[_key(job, request)]) for job in pending if _key(job, request) in known]
    pending = [job for job in pending if _key(job, request) not in known]
    report.conversions = [job.source for job in pending]
    outcomes = _chained(reused, _convert_all(pending, request, console), known, request)
    try:
        for outcome in outcomes:
            if outcome.conversion is None:
                report.skipped.append(Skipped(outcome.job.source, outcome.reason or "unknown error"))
                continue
            entry = entries[outcome.job.name] = _write_output(out, outcome, request.page_images, request.limits)
            report.converted.append(outcome.job.name)
            report.notes += [(outcome.job.source, note) for note in entry.notes]
        if request.prune:
            report.pruned = _prune(out, {job.name for job in jobs})
    finally:  # also on Ctrl-C: the workers stop now, and what was converted is recorded for the next build
        outcomes.close()
        _record(request, report, _entries_on_disk(out, entries, previous_entries))
    return report


def _key(job: _Job, request: CollectionBuildRequest) -> tuple[str, str, bool, str | None]:
    return job.sha256, job.fmt, request.ocr, request.ocr_language


def _reused(job: _Job, earlier: ConversionOutcome) -> ConversionOutcome:
    """An earlier conversion of the same content, as this job's (its name and source are this build's)."""
    return ConversionOutcome(job, earlier.conversion, earlier.reason, earlier.tokens)


def _chained(
    reused: list[ConversionOutcome],
    converting: Generator[ConversionOutcome, None, None],
    known: dict[tuple[str, str, bool, str | None], ConversionOutcome],
    request: CollectionBuildRequest,
) -> Generator[ConversionOutcome, None, None]:
    """The reused outcomes, then the new ones, each new one remembered for the builds that follow."""
    yield from reused
    try:
        for outcome in converting:
            known[_key(outcome.job, request)] = outcome
            yield outcome
    finally:
        converting.close()


def _record(request: CollectionBuildRequest, report: _BuildReport, entries: dict[str, Entry]) -> None:
    report.skipped.sort(key=lambda skipped: skipped.source)
    report.hash = collection_hash(request.out)
    report.manifest = manifest_path(request.out)
    manifest = Manifest(
        domain=request.domain,
        source_dir=str(request.source_dir),
        tokenizer=tokenizer()[0],
        hash=report.hash,
        documents=[entries[name] for name in sorted(entries)],
        skipped=report.skipped,
        archives=report.archives,
    )
    write_manifest(report.manifest, manifest)


def _plan(request: CollectionBuildRequest, scratch: Path) -> tuple[list[_Job], list[Skipped], list[OpenedArchive]]:
    """The jobs (supported files, named; an archive's documents among them, unpacked under SCRATCH), the files
    skipped: refused (sources.py, archives.py) or of no supported format, and the archives opened."""
    source_dir = request.source_dir
    files, skipped = source_files(source_dir, request.links_into)
    files, refused, archives = expand_archives(files, scratch, request.archives)
    skipped += refused
    supported: dict[PurePosixPath, SourceFile] = {}
    formats: dict[PurePosixPath, str] = {}
    for file in files:
        fmt = source_format(Path(file.relative.name))
        if fmt is None and not file.relative.suffix:
            fmt = sniffed_format(file.path)  # README, LICENSE, jq-README: text files often have no suffix
        if fmt is None:
            skipped.append(Skipped(str(file.relative), f"unsupported format ({file.relative.suffix or 'no suffix'})"))
        elif file.relative in supported:  # a name spelt `caf\xe9.txt` beside a Latin-1 one shown so
            skipped.append(Skipped(str(file.relative), "another file's name is shown the same (rename one)"))
        else:
            supported[file.relative], formats[file.relative] = file, fmt
    names = output_names(list(supported), source_dir.resolve().name)
    jobs = [
        _Job(str(rel), file.path, formats[rel], names[rel], file_sha256(file.path), (file.note,) if file.note else ())
        for rel, file in supported.items()
    ]
    return jobs, skipped, archives


def _unchanged(entry: Entry, job: _Job, out: Path, request: CollectionBuildRequest) -> bool:
    name, version = converter(job.fmt)
    output = out / job.name
    same_source = entry.source == job.source and entry.source_sha256 == job.sha256
    same_converter = (entry.converter, entry.converter_version) == (name, version)
    same_ocr = not entry.textless_pages or entry.ocr == request.ocr  # --ocr matters only to pages without text
    wanted_images = request.page_images if job.fmt == "pdf" else None
    same_images = entry.image_dpi == wanted_images and all((out / image["file"]).is_file() for image in entry.images)
    unchanged = same_source and same_converter and same_ocr and same_images
    return unchanged and output.is_file() and file_sha256(output) == entry.sha256


def _convert_all(
    jobs: list[_Job], request: CollectionBuildRequest, console: Console
) -> Generator[ConversionOutcome, None, None]:
    if not jobs:
        return
    columns = (
        TextColumn("converting"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        TextColumn("{task.description}"),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        bar = progress.add_task("", total=len(jobs))
        limits = request.limits
        work = functools.partial(
            _convert_job, ocr=request.ocr, ocr_language=request.ocr_language, max_bytes=limits.output_bytes
        )
        # always in worker processes, --workers 1 too: only there are the memory and time caps
        with contextlib.closing(bounded_map(jobs, work, limits.process, request.workers)) as outcomes:
            for job, outcome in outcomes:
                progress.update(bar, description=escape(job.source))
                yield (
                    ConversionOutcome(job, None, stopped_reason(outcome, limits))
                    if isinstance(outcome, Stopped)
                    else outcome
                )
                progress.advance(bar)


def _convert_job(job: _Job, ocr: bool, ocr_language: str | None, max_bytes: int) -> ConversionOutcome:
    """Runs in a worker process: convert and count tokens; any failure becomes the reason to skip, but for
    running out of memory, which the worker reports as such."""
    try:
        conversion = convert(job.path, job.fmt, ocr, ocr_language, max_bytes)
    except Exception as error:
        if ran_out_of_memory(error):
            raise
        if isinstance(error, Unconvertible):
            return ConversionOutcome(job, None, str(error))
        lines = str(error).strip().splitlines()
        return ConversionOutcome(job, None, f"{type(error).__name__}: {lines[0] if lines else 'conversion failed'}")
    if len(conversion.markdown.encode("utf-8")) > max_bytes:
        return ConversionOutcome(job, None, str(output_too_large(max_bytes)))
    return ConversionOutcome(job, conversion, None, tokenizer()[1](conversion.markdown))


def _write_output(out: Path, outcome: ConversionOutcome, page_images: int | None, limits: ConversionLimits) -> Entry:
    job, conversion = outcome.job, outcome.conversion
    assert conversion is not None
    content = conversion.markdown.encode("utf-8")
    write_bytes_atomic(out / job.name, content, scratch=out.parent)  # scratch outside: never seen in the collection
    folder = out / images_folder(job.name)
    if folder.is_dir() and not folder.is_symlink():
        shutil.rmtree(folder)  # the pictures of an earlier build of this document (or of one without them)
    images: list[dict[str, Any]] = []
    notes = [*job.notes, *conversion.notes]
    if page_images is not None and job.fmt == "pdf":
        folder.mkdir()
        images, problem = render_pictures(job.path, job.name, page_images, out, limits)
        if problem is not None:
            shutil.rmtree(folder)
            notes.append(f"no page images: {problem}")
    name, version = converter(job.fmt)
    return Entry(
        name=job.name,
        source=job.source,
        source_sha256=job.sha256,
        sha256=hashlib.sha256(content).hexdigest(),
        bytes=len(content),
        tokens=outcome.tokens,
        format=job.fmt,
        converter=name,
        converter_version=version,
        ocr=conversion.ocr,
        textless_pages=conversion.textless_pages,
        pages=conversion.pages,
        sheets=conversion.sheets,
        notes=notes,
        image_dpi=page_images if images else None,
        images=images,
    )


def _prune(out: Path, keep: set[str]) -> list[str]:
    removed = []
    pictured = {images_folder(name) for name in keep}
    for path in sorted(out.iterdir()):
        if path.name not in keep and path.is_file():
            path.unlink()
            removed.append(path.name)
        elif path.name.endswith(IMAGES_SUFFIX) and path.name not in pictured and path.is_dir():
            shutil.rmtree(path)
            removed.append(path.name)
    return removed


def _entries_on_disk(out: Path, entries: dict[str, Entry], previous: dict[str, Entry]) -> dict[str, Entry]:
    """An entry for every file in the collection: this build's, else the last build's (a source that is gone
    or now skipped keeps its output until --prune), else one for a file put there by hand."""
    count = tokenizer()[1]
    result = {}
    for path in sorted(p for p in out.iterdir() if p.is_file()):
        if path.name in entries:  # written or checked by this build: its sha256 is known
            result[path.name] = entries[path.name]
            continue
        entry = previous.get(path.name)
        sha256 = file_sha256(path)
        if entry is None or entry.sha256 != sha256:
            text = path.read_bytes().decode("utf-8", errors="replace")
            entry = Entry(path.name, None, None, sha256, path.stat().st_size, count(text), path.suffix.lstrip("."))
        result[path.name] = entry
    return result
