"""`python -m harness tasks import FORMAT ...`: its flags; the imports are `cli/tasks_import.py` (MuDABench) and
`cli/tasks_import_findocmre.py`."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli.arguments import add_collections_dir, add_tasks_dir
from harness.cli.command import Session
from harness.cli.parser import Parser
from harness.core.errors import InputError


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="python -m harness tasks", description="Import other benchmarks' tasks.")
    commands = parser.add_subparsers(dest="action", required=True)
    imports = commands.add_parser("import", help="write a task file and its collections from a benchmark's data")
    formats = imports.add_subparsers(dest="format", required=True)
    muda = formats.add_parser(
        "mudabench",
        help="MuDABench data/simple.json or complex.json and its PDFs: judge-graded tasks, one collection per "
        "document set",
        description="Exit code 0: all imported; 1: some tasks skipped (listed with the reason); 2: bad input.",
    )
    muda.add_argument("data", type=Path, nargs="+", metavar="DATA_JSON", help="MuDABench data files (one per split)")
    muda.add_argument("--pdf-dir", type=Path, required=True, metavar="DIR", help="the PDFs, named <metadata id>.pdf")
    muda.add_argument("--domain", required=True, metavar="NAME", help="the task file's domain (tasks/NAME.jsonl)")
    add_tasks_dir(muda)
    add_collections_dir(muda)
    muda.add_argument("--workers", type=int, default=1, metavar="N", help="conversion processes (default: 1)")
    muda.add_argument("--ocr", action="store_true", help="read PDF pages without a text layer by OCR (Tesseract)")
    muda.add_argument(
        "--ocr-lang",
        default=None,
        metavar="LANGS",
        help="Tesseract languages for --ocr, e.g. chi_sim+eng for MuDABench's Chinese reports (default: eng)",
    )
    _add_findocmre(formats)
    return parser


def _add_findocmre(formats: argparse._SubParsersAction[Parser]) -> None:
    from harness.cli.tasks_import_findocmre import DEFAULT_DPI

    fin = formats.add_parser(
        "findocmre",
        help="FinDocMRE items (JSON Lines or a JSON list) and their PDFs: five answer types, one collection per "
        "source document with its pages kept as images",
        description="Exit code 0: all imported; 1: some tasks skipped (listed with the reason); 2: bad input.",
    )
    fin.add_argument("data", type=Path, nargs="+", metavar="DATA", help="FinDocMRE item files (.jsonl or .json)")
    fin.add_argument("--pdf-dir", type=Path, required=True, metavar="DIR", help="the PDFs, named <source_document>.pdf")
    fin.add_argument("--domain", required=True, metavar="NAME", help="the task file's domain (tasks/NAME.jsonl)")
    add_tasks_dir(fin)
    add_collections_dir(fin)
    fin.add_argument("--workers", type=int, default=1, metavar="N", help="conversion processes (default: 1)")
    fin.add_argument(
        "--page-images",
        type=int,
        default=DEFAULT_DPI,
        metavar="DPI",
        help=f"the resolution the pages are kept at (default: {DEFAULT_DPI})",
    )


def handle(arguments: argparse.Namespace, session: Session) -> int:
    from harness.cli.tasks_import import ImportRequest, run_mudabench_import

    if arguments.workers < 1:
        raise InputError(f"--workers: {arguments.workers} is not a positive number")
    if arguments.format == "findocmre":
        from harness.cli.tasks_import_findocmre import FinDocMREImport, run_findocmre_import

        fin = FinDocMREImport(
            arguments.data,
            arguments.pdf_dir,
            arguments.domain,
            arguments.tasks_dir,
            arguments.collections_dir,
            arguments.page_images,
            arguments.workers,
        )
        return run_findocmre_import(fin, session.console)

    if arguments.ocr_lang is not None:
        _check_ocr_languages(arguments.ocr, arguments.ocr_lang)
    request = ImportRequest(
        arguments.data,
        arguments.pdf_dir,
        arguments.domain,
        arguments.tasks_dir,
        arguments.collections_dir,
        arguments.workers,
        arguments.ocr,
        arguments.ocr_lang,
    )
    return run_mudabench_import(request, session.console)


def _check_ocr_languages(ocr: bool, spec: str) -> None:
    import re

    from harness.inputs.collections.pdf import missing_ocr_languages

    if not ocr:
        raise InputError("--ocr-lang: only with --ocr")
    if not re.fullmatch(r"[a-z][a-z_]*(\+[a-z][a-z_]*)*", spec):
        raise InputError(f"--ocr-lang: {spec!r} is not a Tesseract language list (e.g. chi_sim+eng)")
    missing = missing_ocr_languages(spec)
    if missing:
        raise InputError(
            f"--ocr-lang: no Tesseract data for {', '.join(missing)} (e.g. Debian's tesseract-ocr-chi-sim)"
        )
