"""`python -m harness export mini-swe-agent RUN OUT`: its arguments; the export is `cli/interop.py`."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli.arguments import add_trajectory_format
from harness.cli.command import Session


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m harness export", description="A run's finished episodes as another agent's trajectory files."
    )
    add_trajectory_format(parser)
    parser.add_argument("run", type=Path, metavar="RUN_DIR", help="a run folder")
    parser.add_argument("out", type=Path, metavar="OUT_DIR", help="where <domain>/<task>.traj.json files go")
    return parser


def handle(arguments: argparse.Namespace, session: Session) -> int:
    from harness.cli.interop import export_run

    return export_run(arguments.run, arguments.out, session.console)
