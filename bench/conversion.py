"""Prints `collection build` throughput (pages/s, MB/s per format, and a whole parallel build) and the sandbox
start time with a 2 GB collection against a 1 MB one: the collection is mounted, never copied, so both start
alike.

Run: python bench/conversion.py [SRC_DIR] [--workers N] [--real-bytes]
SRC_DIR defaults to a generated set (PDF reports with tables, XLSX, CSV, HTML, DOCX, Markdown) in /tmp.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import threading
import time
import uuid
from collections import defaultdict
from pathlib import Path

import openpyxl
import pymupdf
from rich.console import Console

from harness.core.errors import InputError
from harness.inputs.collections.build import CollectionBuildRequest, build_collection
from harness.inputs.collections.convert import convert, source_format
from harness.sandboxes.backend import BackendSetup
from harness.sandboxes.base import SandboxSettings
from harness.sandboxes.registry import prepare_backend


def generate_sources(folder: Path, scale: int = 4) -> None:
    """`scale` of each format; each PDF has 10 pages of text and a ruled table."""
    for index in range(scale):
        pdfs, sheets, tables, pages = (folder / name for name in ("reports", "sheets", "tables", "pages"))
        for sub in (pdfs, sheets, tables, pages):
            sub.mkdir(parents=True, exist_ok=True)
        document = pymupdf.open()
        for number in range(10):
            page = document.new_page()
            page.insert_textbox(pymupdf.Rect(72, 72, 540, 300), f"Report {index}, page {number}. " * 40)
            for row in range(12):
                for column in range(4):
                    rect = pymupdf.Rect(72 + column * 110, 320 + row * 18, 182 + column * 110, 338 + row * 18)
                    page.draw_rect(rect)
                    page.insert_text((rect.x0 + 3, rect.y1 - 5), f"{row * 1000 + column:,}")
        document.save(pdfs / f"report-{index}.pdf")
        workbook = openpyxl.Workbook()
        sheet = workbook.active
        sheet.append(["year", "value", "share"])
        for year in range(2000):
            sheet.append([year, year * 1234.5, year / 2000])
        workbook.save(sheets / f"sheet-{index}.xlsx")
        (tables / f"table-{index}.csv").write_text("a,b,c\n" + "".join(f"{i},{i * 2},{i * 3}\n" for i in range(20000)))
        rows = "".join(f"<tr><td>{i}</td><td>{i * 7}</td></tr>" for i in range(500))
        (pages / f"page-{index}.html").write_text(
            f"<html><body><h1>Page {index}</h1><table>{rows}</table></body></html>"
        )


def per_format_throughput(source: Path) -> None:
    """Each file converted once in this process (no pool), grouped by format."""
    seconds, megabytes, pages, files = defaultdict(float), defaultdict(float), defaultdict(int), defaultdict(int)
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        fmt = source_format(path)
        if fmt is None:
            continue
        began = time.perf_counter()
        try:
            conversion = convert(path, fmt)
        except Exception:
            continue
        seconds[fmt] += time.perf_counter() - began
        megabytes[fmt] += path.stat().st_size / 1e6
        pages[fmt] += conversion.pages or conversion.sheets or 0
        files[fmt] += 1
    print("format  files  pages/sheets     MB   seconds   pages/s   MB/s")
    for fmt in sorted(seconds):
        rate = pages[fmt] / seconds[fmt] if pages[fmt] else float("nan")
        print(
            f"{fmt:6} {files[fmt]:6} {pages[fmt]:13} {megabytes[fmt]:6.2f} {seconds[fmt]:9.2f} {rate:9.1f} "
            f"{megabytes[fmt] / seconds[fmt]:6.2f}"
        )


def whole_build(source: Path, workers: int) -> None:
    with tempfile.TemporaryDirectory() as out:
        request = CollectionBuildRequest(source_dir=source, domain="bench", out=Path(out) / "bench", workers=workers)
        began = time.perf_counter()
        report = build_collection(request, Console(quiet=True))
        elapsed = time.perf_counter() - began
        again = time.perf_counter()
        build_collection(request, Console(quiet=True))
        incremental = time.perf_counter() - again
    megabytes = sum(p.stat().st_size for p in source.rglob("*") if p.is_file()) / 1e6
    print(
        f"whole build, {workers} workers: {len(report.converted)} files, {megabytes:.1f} MB in {elapsed:.1f} s "
        f"({megabytes / elapsed:.2f} MB/s); unchanged rebuild {incremental:.2f} s"
    )


def fill_collection(folder: Path, total_bytes: int, real_bytes: bool) -> None:
    """Files of 100 MB (or less): sparse unless `real_bytes` (a mount does not read them either way)."""
    folder.mkdir(parents=True)
    size, index = 100 * 1024 * 1024, 0
    while total_bytes > 0:
        chunk = min(size, total_bytes)
        path = folder / f"doc-{index:03}.md"
        if real_bytes:
            with path.open("wb") as handle:
                block = b"x" * (1 << 20)
                for _ in range(chunk // len(block)):
                    handle.write(block)
                handle.write(b"x" * (chunk % len(block)))
        else:
            with path.open("wb") as handle:
                handle.truncate(chunk)
        total_bytes -= chunk
        index += 1


def sandbox_start(real_bytes: bool, rounds: int = 11) -> None:
    with tempfile.TemporaryDirectory(prefix="harness-bench-") as root:
        small, large = Path(root) / "small", Path(root) / "large"
        fill_collection(small, 1 << 20, real_bytes)
        fill_collection(large, 2 << 30, real_bytes)
        for backend_name in ("local", "docker"):
            try:
                setup = BackendSetup(
                    settings=SandboxSettings(), run_id="bench-conversion", collections={}, time_limit_s=600
                )
                backend = prepare_backend(backend_name, setup)
                backend.start()
            except InputError as error:
                print(f"{backend_name}: skipped ({error})")
                continue
            for label, collection in (("1 MB", small), ("2 GB", large)):
                timings = []
                for _ in range(rounds):
                    began = time.perf_counter()
                    box = backend.new_sandbox("bench", collection, f"bench-{uuid.uuid4().hex[:8]}", threading.Event())
                    try:
                        box.start()
                        result = box.execute("ls /workspace/documents | wc -l", 60)
                        timings.append(time.perf_counter() - began)
                    finally:
                        box.close()
                kind = "real" if real_bytes else "sparse"
                print(
                    f"{backend_name} sandbox, {label} collection ({kind} files, {result.stdout.strip()} files): "
                    f"start + first command median {statistics.median(timings) * 1000:.0f} ms"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", nargs="?", type=Path, help="raw documents (default: a generated set)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--real-bytes", action="store_true", help="write the 2 GB collection for real, not sparse")
    arguments = parser.parse_args()
    generated = None
    if arguments.source is None:
        generated = Path(tempfile.mkdtemp(prefix="harness-bench-sources-"))
        generate_sources(generated)
    source = arguments.source or generated
    try:
        per_format_throughput(source)
        whole_build(source, arguments.workers)
    finally:
        if generated:
            shutil.rmtree(generated)
    sandbox_start(arguments.real_bytes)


if __name__ == "__main__":
    main()
