"""An OpenAI-compatible endpoint that lists its models but never answers a completion: the server a user
meets when a local model hangs. `GET /v1/models` answers as documented
(https://platform.openai.com/docs/api-reference/models/list); `POST /v1/chat/completions` reads the
request (https://platform.openai.com/docs/api-reference/chat/create) and then waits, without a byte of
reply, until the client closes its connection, which it counts."""

from __future__ import annotations

import json
import select
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class SilentServer:
    def __init__(self) -> None:
        self.waiting = 0
        """Completion requests read and not answered, their connections still open."""
        self.closed_by_client = 0
        """Completion requests whose client closed the connection while it waited."""
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

    def _count(self, waiting: int, closed: int) -> None:
        with self._lock:
            self.waiting += waiting
            self.closed_by_client += closed

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                body = json.dumps({"object": "list", "data": [{"id": "x", "object": "model", "owned_by": "me"}]})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body.encode())

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                server._count(1, 0)
                try:
                    while not server._stopped.is_set():
                        readable, _, _ = select.select([self.connection], [], [], 0.05)
                        if readable and not self.connection.recv(1):
                            server._count(0, 1)
                            return
                finally:
                    server._count(-1, 0)
                    self.close_connection = True

        return Handler
