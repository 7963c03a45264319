"""`python -m harness tasks import findocmre DATA... --pdf-dir DIR --domain NAME`: check every item, build one
collection per source document (its pages kept as images for the paper's protocol and the agent's eyes), then
write the task file."""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from harness.cli.command import EXIT_FAILED, EXIT_OK
from harness.cli.tasks_import import find_pdfs, write_tasks
from harness.core.errors import InputError
from harness.core.names import check_domain_name
from harness.core.safe_text import for_terminal
from harness.inputs.collections.build import BuildRequest, build_collection
from harness.inputs.importers.findocmre import STAGING_ROOT, collection_name, read_items, task_row

__all__ = ["DEFAULT_DPI", "FinDocMREImport", "run_findocmre_import"]

DEFAULT_DPI = 144
"""Pages at twice PDF's 72 points per inch: an A4 page is 1191 x 1684 pixels, legible and within every provider's
per-image limit."""


@dataclass(frozen=True)
class FinDocMREImport:
    data: list[Path]
    pdf_dir: Path
    domain: str
    tasks_dir: Path
    collections_dir: Path
    page_images: int = DEFAULT_DPI
    workers: int = 1


def run_findocmre_import(request: FinDocMREImport, console: Console) -> int:
    """EXIT_OK: every task imported; EXIT_FAILED: some skipped (a missing or unconvertible PDF)."""
    check_domain_name(request.domain, "--domain")
    # against the working directory, as every CLI path: the staging folder's link must not be relative
    request = dataclasses.replace(request, pdf_dir=request.pdf_dir.absolute())
    if not request.pdf_dir.is_dir():
        raise InputError(f"--pdf-dir: {request.pdf_dir}: folder not found")
    items = [item for path in request.data for item in read_items(path)]
    if not items:
        raise InputError(f"{request.data[0]}: no items")
    seen: dict[str, str] = {}
    for item in items:
        if item.id in seen:
            raise InputError(f"{item.where}: field 'id': duplicate id {item.id!r} (first at {seen[item.id]})")
        seen[item.id] = item.where
    pdfs, refused = find_pdfs(request.pdf_dir)
    documents = sorted({item.source_document for item in items})
    missing = [stem for stem in documents if stem not in pdfs]
    if len(missing) == len(documents):
        raise InputError(f"--pdf-dir: {request.pdf_dir}: no source document found (e.g. {missing[0]}.pdf)")
    failed = {stem: reason for stem in documents if stem not in missing for reason in _build(request, stem, pdfs)}
    usable = set(documents) - set(missing) - set(failed)
    kept = [task_row(request.domain, item) for item in items if item.source_document in usable]
    path = request.tasks_dir / f"{request.domain}.jsonl"
    say = _printer(console)
    say(f"{path}: {len(kept)} tasks over {len(usable)} documents (pages at {request.page_images} dpi)")
    for stem in missing:
        say(f"  missing {stem}.pdf")
    for stem, reason in sorted(failed.items()):
        say(f"  could not convert {stem}.pdf: {reason}")
    for skipped in refused:
        say(f"  refused {skipped.source}: {skipped.reason}")
    write_tasks(path, kept)
    return EXIT_FAILED if missing or failed else EXIT_OK


def _build(request: FinDocMREImport, stem: str, pdfs: dict[str, Path]) -> list[str]:
    """The document's collection from a staging folder holding a link to its PDF; the reasons it was skipped."""
    name = collection_name(request.domain, stem)
    with tempfile.TemporaryDirectory(prefix="findocmre-") as scratch:
        staging = Path(scratch) / STAGING_ROOT
        staging.mkdir()
        (staging / f"{stem}.pdf").symlink_to(pdfs[stem])
        build = BuildRequest(
            staging,
            name,
            request.collections_dir / name,
            request.workers,
            prune=True,
            links_into=(request.pdf_dir,),
            page_images=request.page_images,
        )
        report = build_collection(build, Console(quiet=True))
    return [skipped.reason for skipped in report.skipped]


def _printer(console: Console) -> Callable[[str], None]:
    def say(text: str) -> None:
        console.print(for_terminal(text, keep_newlines=False), markup=False, highlight=False, soft_wrap=True)

    return say
