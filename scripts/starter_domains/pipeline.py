"""Build the eight-domain starter suite (collections/<domain>/ and tasks/<domain>.jsonl) from real public data
(the pinned packages of sources.py).

For each domain: write a raw archive (one first-level folder per source, mixed formats: tables as CSV, XLSX,
HTML and Markdown, plus the packages' own PDF and text documents), convert it with `python -m harness
collection build RAW --domain NAME --out collections/NAME`, and write the domain's task table as the task
file. Tables split one data set into several documents (by state, year, city, ...), so every task needs at
least two of them. Some documents are in German, French, Spanish or Dutch, with their decimal comma.

Gold answers are computed here with Decimal (ROUND_HALF_EVEN) from the figures exactly as printed in the raw
tables; each task's `solution` recomputes them from the converted Markdown inside the sandbox, and every
solution runs against the converted collection before the task file is written, so a converter that changed
a figure stops the build.

Usage: python scripts/build_domains.py [--root .] [--domain law ...] [--raw DIR] [--debs DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from decimal import Decimal
from pathlib import Path

from .domains import DOMAINS
from .sources import Debs
from .spec import Domain, Ref, Text
from .splits import tables
from .tasks import TaskRow, task_rows
from .writers import write_copy, write_raw

DOCS = "/workspace/documents"


def verify(rows: list[TaskRow], collection: Path) -> None:
    """Run every solution against the converted collection (its path in place of the sandbox's)."""
    for row in rows:
        script = row["solution"].replace(DOCS, str(collection.resolve()))
        result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120)
        if result.stdout.strip() != row["answer"]:
            raise SystemExit(
                f"{row['id']}: the solution on the converted documents gives {result.stdout.strip()!r}, gold "
                f"{row['answer']!r} {result.stderr.strip()}"
            )
        missing = [name for name in row["evidence"] if not (collection / name).is_file()]
        if missing:
            raise SystemExit(f"{row['id']}: evidence not in the collection: {missing}")


def build_domain(domain: Domain, root: Path, raw_root: Path, debs: Debs) -> None:
    documents = {doc_id: table for split in domain.splits for doc_id, table in tables(split).items()}
    copies = domain.copies(debs)
    raw = raw_root / domain.name
    if raw.exists():
        shutil.rmtree(raw)
    for table in documents.values():
        write_raw(table, raw)
    for copy in copies:
        write_copy(copy, raw)
    out = root / "collections" / domain.name
    command = [sys.executable, "-m", "harness", "collection", "build", str(raw), "--domain", domain.name]
    # the harness of --root, unless PYTHONPATH names another (cwd is the raw folder: no stray package there)
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH") or str(root)}
    result = subprocess.run([*command, "--out", str(out), "--prune"], cwd=raw, env=env)
    if result.returncode != 0:
        raise SystemExit(f"{domain.name}: collection build failed (exit {result.returncode})")

    def printed(ref: Ref | Text) -> Decimal:
        return Decimal(ref.printed) if isinstance(ref, Text) else documents[ref.doc].value(ref.key, ref.col)

    rows = task_rows(domain, printed)
    verify(rows, out)
    with (root / "tasks" / f"{domain.name}.jsonl").open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{domain.name}: {len(list(out.glob('*.md')))} documents, {len(rows)} tasks")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2])
    parser.add_argument("--domain", action="append", choices=list(DOMAINS), help="only these domains (repeatable)")
    parser.add_argument("--raw", type=Path, help="write the raw archives here (default: under the system temp)")
    parser.add_argument("--debs", type=Path, help="cache of downloaded Debian packages (default: temporary)")
    args = parser.parse_args()
    # a stable default path: the manifest records where the sources were
    raw_root = args.raw or Path(tempfile.gettempdir()) / "harness-build-domains" / "raw"
    with tempfile.TemporaryDirectory(prefix="harness-build-domains-") as scratch:
        debs = Debs(args.debs or Path(scratch) / "debs")
        for name in args.domain or DOMAINS:
            build_domain(DOMAINS[name], args.root.resolve(), raw_root, debs)
