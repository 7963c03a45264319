"""An OpenAI-compatible endpoint that lists its models but never answers a completion: the server a user
meets when a local model hangs. `GET /v1/models` answers as documented
(https://platform.openai.com/docs/api-reference/models/list); `POST /v1/chat/completions` reads the
request (https://platform.openai.com/docs/api-reference/chat/create) and then waits, without a byte of
reply, until the client closes its connection, which it counts."""

from __future__ import annotations

import select
from http.server import BaseHTTPRequestHandler

from tests.helpers.loopback_server import LoopbackServer, ModelsHandler


class SilentServer(LoopbackServer):
    def __init__(self) -> None:
        self.waiting = 0
        """Completion requests read and not answered, their connections still open."""
        self.closed_by_client = 0
        """Completion requests whose client closed the connection while it waited."""
        super().__init__()

    def _count(self, waiting: int, closed: int) -> None:
        with self._lock:
            self.waiting += waiting
            self.closed_by_client += closed

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(ModelsHandler):
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
