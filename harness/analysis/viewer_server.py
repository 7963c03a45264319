"""`python -m harness view RUN...`: the viewer served on loopback, under a secret path only its URL names.

Routes (below /<token>/): the page, `index.json`, `episodes/<n>.json` (one episode, read when asked for),
`images/<sha256>.<ext>` (an image a run stored, found by its hash, its bytes checked against it, its type ours)
and `search?q=` (the episodes whose commands or outputs hold the text). Nothing else is served: no file path is
ever taken from a request. Another user of the machine can reach the port but not guess the token.
"""

from __future__ import annotations

import re
import secrets
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from harness.analysis.viewer_page import page_html
from harness.analysis.viewer_site import ViewerSite
from harness.core.json_text import json_text

LOOPBACK = "127.0.0.1"
_EPISODE = re.compile(r"episodes/(\d{1,9})\.json")
_IMAGE = re.compile(r"images/([0-9a-f]{64})\.(?:png|jpg|webp)")


class ViewerServer:
    """A running viewer: `url` to open, `close()` to stop; requests are answered on a thread of its own."""

    def __init__(self, site: ViewerSite, port: int = 0):
        self.token = secrets.token_urlsafe(16)
        self._server = ThreadingHTTPServer((LOOPBACK, port), _handler(site, self.token))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="viewer", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self._server.server_address[1]}/{self.token}/"

    def wait(self) -> None:
        """Until Ctrl-C (or close from another thread)."""
        self._thread.join()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _handler(site: ViewerSite, token: str) -> type[BaseHTTPRequestHandler]:
    prefix = f"/{token}/"
    page = page_html(site.title, served=True)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            url = urlsplit(self.path)
            if not url.path.startswith(prefix):
                return self._send(HTTPStatus.NOT_FOUND, "text/plain", b"not found")
            route = url.path[len(prefix) :]
            if route == "":
                return self._send(HTTPStatus.OK, "text/html; charset=utf-8", page.encode())
            if route == "index.json":
                return self._json(site.index())
            if route == "search":
                return self._json(site.search(parse_qs(url.query).get("q", [""])[0]))
            if (image := _IMAGE.fullmatch(route)) is not None:
                found = site.image(image.group(1))
                if found is None:
                    return self._send(HTTPStatus.NOT_FOUND, "text/plain", b"not found")
                return self._send(HTTPStatus.OK, found[1], found[0])
            match = _EPISODE.fullmatch(route)
            episode = site.episode(int(match.group(1))) if match else None
            if episode is None:
                return self._send(HTTPStatus.NOT_FOUND, "text/plain", b"not found")
            return self._json(episode)

        def _json(self, data: Any) -> None:
            self._send(HTTPStatus.OK, "application/json", json_text(data).encode())

        def _send(self, status: HTTPStatus, kind: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Content-Security-Policy", _POLICY)
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the terminal shows the URL, not every request."""

    return Handler


_POLICY = (
    "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; "
    "img-src 'self'"
)
"""Only the page's own script runs and it talks only to this server: an output's markup can load nothing."""
