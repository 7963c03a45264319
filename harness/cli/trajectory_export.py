"""`python -m harness export FORMAT RUN... OUT`: its arguments; the exports are `interop/mini_swe_agent_runs.py`
(mini-swe-agent) and `interop/inspect_runs.py` (inspect)."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli.arguments import add_trajectory_format
from harness.cli.command import Session
from harness.core.errors import InputError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
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
    if arguments.format == "inspect":
        from harness.interop.inspect_runs import export_runs

        return export_runs(arguments.runs, arguments.out, session.console)
    from harness.interop.mini_swe_agent_runs import export_run

    if len(arguments.runs) != 1:
        raise InputError("export mini-swe-agent: one RUN_DIR at a time")
    return export_run(arguments.runs[0], arguments.out, session.console)
