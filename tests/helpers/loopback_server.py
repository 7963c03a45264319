"""What the bare OpenAI-compatible fakes (silent_server.py, hostile_server.py) share: a threaded HTTP server on
loopback under a `/v1` base URL, and the `GET /v1/models` answer the run's pre-flight asks for, as documented
(https://platform.openai.com/docs/api-reference/models/list). Each fake gives its own `POST` in `_handler`."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class LoopbackHTTPServer(ThreadingHTTPServer):
    """A threaded server whose listen queue holds a batch's connections at once. `socketserver`'s default of 5
    overflows when dozens of episodes connect while the accepting thread waits for the GIL on a loaded machine;
    the kernel then drops the handshake's last packet, and the client's request can hang until its read timeout
    (seen: a 600 s stall mid-sweep). Real servers listen with a queue of hundreds (uvicorn: 2048)."""

    request_queue_size = 1024
    daemon_threads = True


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
        self._server = LoopbackHTTPServer(("127.0.0.1", 0), self._handler())

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
