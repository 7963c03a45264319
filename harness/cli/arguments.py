"""The arguments several commands take, each declared once (a run's own are generated from `RunConfig`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.inputs.config import JUDGE_TIMEOUT_S, default_collections_dir, default_tasks_dir


def add_tasks_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tasks-dir", type=Path, default=default_tasks_dir(), metavar="DIR", help="default: tasks/ (HARNESS_TASKS_DIR)"
    )


def add_collections_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--collections-dir",
        type=Path,
        default=default_collections_dir(),
        metavar="DIR",
        help="default: collections/ (HARNESS_COLLECTIONS_DIR)",
    )


def add_results_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--results-dir", type=Path, default=Path("results"), metavar="DIR", help="default: results/")


def add_trajectory_format(parser: argparse.ArgumentParser) -> None:
    """The other agent's trajectory format `import` reads and `export` writes."""
    from harness.interop.formats import FORMATS  # the table, not the formats: none is imported until chosen

    parser.add_argument(
        "format",
        choices=tuple(FORMATS),
        help="the files' format (inspect: inspect_ai `.eval` logs, the optional extra harness[inspect])",
    )


def add_judge_panel(parser: argparse.ArgumentParser, required: bool) -> None:
    """A judge panel's flags, as `annotate` and `import` take them (a run's come from `RunConfig`)."""
    parser.add_argument(
        "--judge",
        required=required,
        metavar="MODEL[,MODEL...]",
        help="judge models, comma-separated (litellm names or aliases)",
    )
    parser.add_argument("--judge-quorum", type=int, metavar="N", help="valid verdicts a grade needs (a majority)")
    parser.add_argument("--judge-api-base", metavar="URL", help="the judges' endpoint (a local server)")
    parser.add_argument(
        "--judge-timeout", type=float, default=JUDGE_TIMEOUT_S, metavar="SECONDS", help="seconds per judge call"
    )


def add_page_images(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--page-images",
        type=int,
        metavar="DPI",
        default=None,
        help="also keep each PDF's pages as PNG at DPI and its embedded figures, in <document>.images/ beside its "
        "Markdown (listed in the manifest with page and caption)",
    )
