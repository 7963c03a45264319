"""What the bare OpenAI-compatible fakes (silent_server.py, hostile_server.py) share: a threaded HTTP server on
loopback under a `/v1` base URL, and the `GET /v1/models` answer the run's pre-flight asks for, as documented
(https://platform.openai.com/docs/api-reference/models/list). Each fake gives its own `POST` in `_handler`."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODELS = json.dumps({"object": "list", "data": [{"id": "x", "object": "model", "owned_by": "me"}]}).encode()


class ModelsHandler(BaseHTTPRequestHandler):
    """Answers `GET /v1/models`; logs nothing."""

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(MODELS)))
        self.end_headers()
        self.wfile.write(MODELS)


class LoopbackServer:
    """A server on a free loopback port; `_stopped` is set when it stops, for replies that wait on it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> None:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self._stopped.set()
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError
