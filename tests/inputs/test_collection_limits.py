"""`collection build` on tiny hostile documents (issue 37): each is skipped with the limit it went over
(memory, time, output size), within the limits' time, and the other documents are built."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from harness.inputs.collections.manifest import manifest_path, read_manifest
from tests.helpers.collection_bombs import make_pdf_time_bomb, make_xlsx_memory_bomb, make_xlsx_merge_bomb
from tests.helpers.collection_files import make_pdf, make_xlsx

LIMITS = ["--max-memory", "400", "--max-time", "10", "--max-output", "5"]


@pytest.mark.parametrize("workers", [1, 2])
def test_each_bomb_is_skipped_with_its_limit_and_the_rest_is_built(tmp_path, workers):
    source = tmp_path / "src"
    make_xlsx_memory_bomb(source / "bombs" / "last-cell.xlsx")
    make_xlsx_merge_bomb(source / "bombs" / "merged.xlsx")
    make_pdf_time_bomb(source / "bombs" / "scattered.pdf")
    make_pdf(source / "good" / "report.pdf")
    make_xlsx(source / "good" / "revenue.xlsx")
    assert max(path.stat().st_size for path in (source / "bombs").iterdir()) < 10_000
    out = tmp_path / "out" / "d"
    build = ["collection", "build", str(source), "--domain", "d", "--out", str(out), "--workers", str(workers)]
    started = time.monotonic()
    command = [sys.executable, "-m", "harness", *build, *LIMITS]
    wide = os.environ | {"COLUMNS": "300"}  # each skipped file on its line, unwrapped
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=wide)
    elapsed = time.monotonic() - started
    skipped = {item.source: item.reason for item in read_manifest(manifest_path(out)).skipped}
    assert done.returncode == 1, done.stderr
    assert elapsed < 90  # each bomb alone would take minutes and gigabytes
    assert skipped == {
        "bombs/last-cell.xlsx": "memory: converting it needs more than 400 MB (--max-memory)",
        "bombs/merged.xlsx": "output size: its Markdown is larger than 5 MB (--max-output)",
        "bombs/scattered.pdf": "time: converting it took longer than 10 s (--max-time)",
    }
    for source_name, reason in skipped.items():
        assert f"skipped {source_name}: {reason}\n" in done.stdout
    assert sorted(path.name for path in out.iterdir()) == ["good_report.md", "good_revenue.md"]
    assert "Revenue" in (out / "good_revenue.md").read_text()
