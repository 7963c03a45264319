"""`python -m harness export FORMAT RUN... OUT`: its arguments; the export is the format's (`interop/formats.py`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli.arguments import add_trajectory_format
from harness.cli.command import Session
from harness.cli.parser import Parser


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="python -m harness export", description="A run's finished episodes as another agent's trajectory files."
    )
    add_trajectory_format(parser)
    parser.add_argument("runs", type=Path, nargs="+", metavar="RUN_DIR", help="run folders (mini-swe-agent: one)")
    parser.add_argument(
        "out",
        type=Path,
        metavar="OUT_DIR",
        help="where <domain>/<task>.traj.json files (mini-swe-agent) or <run-id>.eval logs go",
    )
    return parser


def handle(arguments: argparse.Namespace, session: Session) -> int:
    from harness.interop.formats import trajectory_format

    return trajectory_format(arguments.format).export(arguments.runs, arguments.out, session.console)
