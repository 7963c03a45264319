"""Prints how long the E2B emulator takes to build a template over a collection it has not built yet, once the
recipe's layers are built: what each emulator test that builds its own collection pays after the first build.
tests/helpers/e2b_emulator_build.py keys a COPY layer as E2B does (paths, modes and bytes; not mtimes), so
Docker's build cache finds the recipe's layers again and only the collection's layers are built.

Run: python bench/e2b_emulator_builds.py [BUILDS]   (from the repository root; needs Docker and the
debootstrap base image, as the emulator's tests do)
The first build is printed apart: on an engine that has never built the recipe's layers it installs their
packages (a minute or more); afterwards it takes as long as the others.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import tests.helpers.e2b_emulator as emulator
from harness.sandboxes.e2b.templates import TemplateResources, build_template


def timed_build(folder: Path) -> float:
    """A build over a new one-document collection, its files written just now."""
    collection = folder / uuid.uuid4().hex
    collection.mkdir()
    (collection / "report.md").write_text(f"# Report {collection.name}\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    started = time.perf_counter()
    build_template(emulator, "bench", collection, TemplateResources(2, 4096), lambda line: None)
    return time.perf_counter() - started


def main(builds: int) -> None:
    os.environ.setdefault("E2B_API_KEY", "emulator-key")
    with tempfile.TemporaryDirectory() as folder:
        first = timed_build(Path(folder))
        later = [timed_build(Path(folder)) for _ in range(builds)]
    print(f"first build: {first:.1f} s")
    print(f"a build over another collection, median of {builds}: {statistics.median(later):.1f} s")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
