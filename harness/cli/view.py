"""`python -m harness view RUN`: a run as one self-contained HTML file."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli.command import EXIT_OK, Session


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m harness view", description="A self-contained HTML viewer.")
    parser.add_argument("run", type=Path, help="a run folder")
    parser.add_argument("--out", type=Path, help="output file (default: RUN/viewer.html)")
    return parser


def handle(arguments: argparse.Namespace, session: Session) -> int:
    from harness.analysis.viewer import write_viewer

    path = write_viewer(arguments.run, arguments.out)
    session.console.print(f"viewer written to {path}", markup=False)
    return EXIT_OK
