"""`python -m harness view RUN [RUN...]`: the runs served on loopback, or (--static DIR) written as files."""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

from harness.cli.command import EXIT_OK, Session
from harness.cli.parser import Parser


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="python -m harness view",
        description="Browse runs: the episode list with filters and search, each episode when opened, and a "
        "task x model grid across the runs. Served on 127.0.0.1 at a printed URL until Ctrl-C.",
    )
    parser.add_argument(
        "runs", type=Path, nargs="+", metavar="RUN", help="run folders, sweep folders or any folders of run folders"
    )
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free one)")
    parser.add_argument(
        "--static", type=Path, metavar="DIR", help="write the page and one file per episode to DIR instead, to host"
    )
    return parser


def handle(arguments: argparse.Namespace, session: Session) -> int:
    from harness.analysis.run_selection import run_folders
    from harness.analysis.viewer import write_static
    from harness.analysis.viewer_server import ViewerServer
    from harness.analysis.viewer_site import ViewerSite
    from harness.core.safe_text import for_terminal

    selection = run_folders(arguments.runs)
    for note in selection.left_out:
        session.console.print(f"left out: {for_terminal(note)}", markup=False, highlight=False, soft_wrap=True)
    site = ViewerSite(selection.runs)
    if arguments.static:
        page = write_static(site, arguments.static)
        session.console.print(f"viewer written to {page} (serve its folder, e.g. python -m http.server)", markup=False)
        return EXIT_OK
    server = ViewerServer(site, arguments.port)
    # Ctrl-C is the way to stop it, from the moment the URL can be read (a reader may send it while the
    # print is still returning)
    try:
        with contextlib.suppress(KeyboardInterrupt):
            session.console.print(f"viewer at {server.url} (Ctrl-C stops it)", markup=False, soft_wrap=True)
            server.wait()
    finally:
        server.close()
    return EXIT_OK
