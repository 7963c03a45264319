"""`python -m harness collection build|stats`: resolve the folders, run, print what happened."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from harness.cli.arguments import add_collections_dir, add_page_images
from harness.cli.command import EXIT_FAILED, EXIT_OK, Session
from harness.cli.parser import Parser
from harness.core.errors import InputError
from harness.core.extras import require_extra
from harness.core.safe_text import for_terminal


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="python -m harness collection", description="Build a collection from raw documents; show sizes."
    )
    commands = parser.add_subparsers(dest="action", required=True)
    build = commands.add_parser(
        "build",
        help="convert a folder of PDF, XLSX/XLS, CSV/TSV, DOCX, PPTX, HTML, Markdown and text files to Markdown",
        description="Exit code 0: all built; 1: some sources skipped (listed with the reason); 2: bad input; "
        "130: interrupted (what was converted is kept and recorded).",
    )
    build.add_argument("source_dir", type=Path, metavar="SRC_DIR", help="raw documents; first-level folders = sources")
    build.add_argument("--domain", required=True, metavar="NAME", help="the collection's name (collections/NAME/)")
    build.add_argument("--out", type=Path, metavar="DIR", help="the collection folder (default: COLLECTIONS_DIR/NAME)")
    add_collections_dir(build)
    build.add_argument(
        "--workers", type=int, metavar="N", default=min(4, os.cpu_count() or 1), help="processes (default: up to 4)"
    )
    build.add_argument("--prune", action="store_true", help="delete collection files no current source produces")
    build.add_argument("--ocr", action="store_true", help="read PDF pages without a text layer by OCR (Tesseract)")
    add_page_images(build)
    build.add_argument(
        "--no-page-images",
        action="store_true",
        help="drop the page images and figures an earlier --page-images kept (a rebuild without either flag keeps "
        "them at the resolution they were built at)",
    )
    _add_conversion_limits(build)
    stats = commands.add_parser("stats", help="documents, bytes, tokens and formats per domain")
    stats.add_argument("domain", nargs="?", default="all", help="a domain or 'all' (default)")
    add_collections_dir(stats)
    forget = commands.add_parser(
        "delete-store",
        help="delete the collection's OpenAI File Search vector store and its uploaded files (kept between runs)",
        description="Exit code 0: deleted; 1: the collection has no store (its documents as they are now); 2: bad "
        "input. The key is OPENAI_API_KEY's.",
    )
    forget.add_argument("name", metavar="NAME", help="the collection (COLLECTIONS_DIR/NAME)")
    add_collections_dir(forget)
    forget.add_argument("--api-base", metavar="URL", help="File Search's API base (default OpenAI's)")
    return parser


def _add_conversion_limits(parser: argparse.ArgumentParser) -> None:
    """Past one of these a document is skipped, its reason naming the limit (a tiny hostile file can ask for
    hundreds of gigabytes, hours or gigabytes of Markdown)."""
    from harness.inputs.collections.limits import MAX_MEMORY_MB, MAX_OUTPUT_MB, MAX_SECONDS

    limits = parser.add_argument_group("limits per document")
    limits.add_argument(
        "--max-memory",
        type=int,
        metavar="MB",
        default=MAX_MEMORY_MB,
        help=f"memory of the process converting it (default: {MAX_MEMORY_MB})",
    )
    limits.add_argument(
        "--max-time",
        type=float,
        metavar="S",
        default=MAX_SECONDS,
        help=f"seconds its conversion may take (default: {MAX_SECONDS:g})",
    )
    limits.add_argument(
        "--max-output",
        type=int,
        metavar="MB",
        default=MAX_OUTPUT_MB,
        help=f"size of its Markdown (default: {MAX_OUTPUT_MB})",
    )


def handle(arguments: argparse.Namespace, session: Session) -> int:
    session.kept = "the files converted so far are kept and in the manifest"
    if arguments.action == "stats":
        return _stats(arguments.domain, arguments.collections_dir, session.console)
    if arguments.action == "delete-store":
        return _delete_store(arguments.collections_dir / arguments.name, arguments.api_base, session.console)
    return _build(arguments, session.console)


def _delete_store(folder: Path, api_base: str | None, console: Console) -> int:
    from harness.inputs.retrieval.base import RetrievalFailed
    from harness.inputs.retrieval.chunks import ChunkSettings
    from harness.inputs.retrieval.file_search import OpenAIFileSearch

    if not folder.is_dir():
        raise InputError(f"{folder}: no such collection folder")
    if not os.environ.get("OPENAI_API_KEY"):
        raise InputError("collection delete-store: needs OPENAI_API_KEY (File Search's key)")
    try:
        deleted = OpenAIFileSearch(ChunkSettings(), api_base).delete(folder)
    except RetrievalFailed as error:
        raise InputError(f"collection delete-store: {error}") from None
    if not deleted:
        console.print(f"{escape(for_terminal(folder.name))}: no File Search store holds its documents as they are now")
        return EXIT_FAILED
    console.print(f"{escape(for_terminal(folder.name))}: its File Search store and uploaded files are deleted")
    return EXIT_OK


def _stats(domain: str, collections_dir: Path, console: Console) -> int:
    from harness.inputs.collections.stats import collections_for, domain_stats, print_stats

    print_stats([domain_stats(path) for path in collections_for(domain, collections_dir)], console)
    return EXIT_OK


def _build(arguments: argparse.Namespace, console: Console) -> int:
    """EXIT_FAILED when a source was skipped (the rest is built)."""
    require_extra("convert", "collection build")
    from harness.inputs.collections.build import CollectionBuildRequest, build_collection
    from harness.inputs.collections.limits import ConversionLimits
    from harness.inputs.collections.manifest import manifest_path, read_manifest
    from harness.inputs.collections.pictures import built_resolution, pictures_line

    if arguments.page_images is not None and arguments.no_page_images:
        raise InputError("--no-page-images: not with --page-images")
    out = arguments.out or arguments.collections_dir / arguments.domain
    before = read_manifest(manifest_path(out))
    page_images = arguments.page_images
    if page_images is None and not arguments.no_page_images:
        page_images = built_resolution(before)  # zero-shot runs need them: never dropped unless asked
    request = CollectionBuildRequest(
        source_dir=arguments.source_dir,
        domain=arguments.domain,
        out=out,
        workers=arguments.workers,
        prune=arguments.prune,
        ocr=arguments.ocr,
        page_images=page_images,
        limits=ConversionLimits(arguments.max_memory, arguments.max_time, arguments.max_output),
    )
    report = build_collection(request, console)
    total = len(report.converted) + len(report.unchanged)
    console.print(
        f"{_shown(request.out)}: {total} documents ({len(report.converted)} converted, "
        f"{len(report.unchanged)} unchanged), {len(report.skipped)} skipped"
        + (f", {len(report.pruned)} pruned" if report.pruned else "")
    )
    for archive in report.archives:
        console.print(
            f"  opened {_shown(archive.source)}: {archive.members} members, {archive.bytes:,} bytes unpacked",
            highlight=False,
        )
    for skipped in report.skipped:
        console.print(f"  skipped {_shown(skipped.source)}: {_shown(skipped.reason)}", highlight=False)
    for source, note in report.notes:
        console.print(f"  note {_shown(source)}: {_shown(note)}", highlight=False, soft_wrap=True)
    kept_from_before = arguments.page_images is None and page_images is not None
    line = pictures_line(before, read_manifest(manifest_path(out)), kept_from_before)
    if line:
        console.print(f"  {line}", highlight=False, soft_wrap=True)
    console.print(f"manifest {_shown(report.manifest)} ({report.hash})", highlight=False)
    return EXIT_FAILED if report.skipped else EXIT_OK


def _shown(name: object) -> str:
    """A name from the source folder (an archive's) on one line, no escape sequence, no rich markup."""
    return escape(for_terminal(str(name), keep_newlines=False))
