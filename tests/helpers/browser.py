"""Headless Chromium (Debian's) driven by Playwright, and the viewer served to it."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from harness.analysis.viewer_server import ViewerServer
from harness.analysis.viewer_site import ViewerSite
from tests.helpers.loopback_server import LoopbackHTTPServer

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@contextmanager
def headless_chromium() -> Iterator[Any]:
    if CHROMIUM is None:
        pytest.fail("the viewer tests need Debian's chromium (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def viewer_page(runs: list[Path]) -> Iterator[Any]:
    """The viewer of RUNS served as `view` serves it, open in a Chromium page once its index has loaded."""
    server = ViewerServer(ViewerSite(runs))
    try:
        with headless_chromium() as browser:
            page = browser.new_page()
            page.goto(server.url)
            page.wait_for_selector("body[data-ready=true]")
            yield page
    finally:
        server.close()


def search(page: Any, text: str, matches: int | None = None) -> None:
    """Search the viewer's episodes for TEXT (empty: show them all); with MATCHES, wait until the count says so."""
    page.fill("#search", text)
    page.press("#search", "Enter")
    if matches is not None:
        page.wait_for_selector(f"#count:has-text('search: {matches} match')")


@contextmanager
def static_server(folder: Path) -> Iterator[str]:
    """FOLDER served by a plain static web server (as a host would), its URL."""
    server = LoopbackHTTPServer(("127.0.0.1", 0), partial(_QuietFiles, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class _QuietFiles(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass
