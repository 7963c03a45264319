"""The arguments several commands take, each declared once (a run's own are generated from `RunConfig`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.inputs.config import default_collections_dir, default_tasks_dir


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
    parser.add_argument(
        "format",
        choices=("mini-swe-agent", "inspect"),
        help="the files' format (inspect: inspect_ai `.eval` logs, the optional extra harness[inspect])",
    )
