"""`python -m harness export FORMAT RUN... OUT`: its arguments; the export is the format's (`interop/formats.py`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli.arguments import add_trajectory_format
from harness.cli.command import Session
from harness.cli.parser import Parser
from harness.core.errors import InputError


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="python -m harness export",
        description="A run's finished episodes as another agent's trajectory files, or the tasks runs ran as a "
        "Harbor dataset.",
    )
    add_trajectory_format(parser)
    parser.add_argument(
        "runs",
        type=Path,
        nargs="+",
        metavar="RUN_DIR",
        help="run folders, sweep folders or folders of runs (mini-swe-agent: one run; harbor: the tasks they ran)",
    )
    parser.add_argument(
        "out",
        type=Path,
        metavar="OUT_DIR",
        help="where <domain>/<task>.traj.json files (mini-swe-agent), <run-id>.eval logs (inspect) or the Harbor "
        "dataset's <domain>__<task> folders (harbor: a new folder) go",
    )
    parser.add_argument(
        "--image",
        metavar="IMAGE",
        help="harbor: the image each task's environment is built FROM (default: this version's sandbox image, "
        "`python -m harness sandbox build docker`)",
    )
    return parser


def handle(arguments: argparse.Namespace, session: Session) -> int:
    from harness.analysis.run_selection import one_run, run_folders
    from harness.interop.formats import trajectory_format

    if arguments.format == "mini-swe-agent":
        runs = [one_run(run, "export mini-swe-agent") for run in arguments.runs]
    else:
        runs = run_folders(arguments.runs).runs
    if arguments.format == "harbor":
        from harness.interop.harbor_runs import export
        from harness.sandboxes.recipe import default_image

        return export(runs, arguments.out, session.console, arguments.image or default_image())
    if arguments.image:
        raise InputError(f"export {arguments.format}: --image is for harbor only")
    return trajectory_format(arguments.format).export(runs, arguments.out, session.console)
