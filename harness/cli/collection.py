"""`python -m harness collection build|stats`: resolve the folders, run, print what happened."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.markup import escape

from harness.inputs.collections.build import BuildRequest, build_collection
from harness.inputs.collections.stats import collections_for, domain_stats, print_stats
from harness.inputs.config import default_collections_dir

EXIT_SKIPPED = 1
"""Exit code of a build that skipped at least one source (the rest is built)."""


def run_collection_command(arguments: argparse.Namespace, console: Console) -> int:
    collections_dir = arguments.collections_dir or default_collections_dir()
    if arguments.action == "stats":
        print_stats([domain_stats(path) for path in collections_for(arguments.domain, collections_dir)], console)
        return 0
    request = BuildRequest(
        source_dir=arguments.source_dir,
        domain=arguments.domain,
        out=arguments.out or collections_dir / arguments.domain,
        workers=arguments.workers,
        prune=arguments.prune,
        ocr=arguments.ocr,
    )
    report = build_collection(request, console)
    total = len(report.converted) + len(report.unchanged)
    console.print(
        f"{escape(str(request.out))}: {total} documents ({len(report.converted)} converted, "
        f"{len(report.unchanged)} unchanged), {len(report.skipped)} skipped"
        + (f", {len(report.pruned)} pruned" if report.pruned else "")
    )
    for skipped in report.skipped:
        console.print(f"  skipped {escape(skipped.source)}: {escape(skipped.reason)}", highlight=False)
    console.print(f"manifest {escape(str(report.manifest))} ({report.hash})", highlight=False)
    return EXIT_SKIPPED if report.skipped else 0
