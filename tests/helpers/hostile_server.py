"""An OpenAI-compatible endpoint that misbehaves on the wire: the shapes a provider (or a proxy in front of one)
can take to hold a call for ever or to fill the runner's memory. `GET /v1/models` answers as documented
(https://platform.openai.com/docs/api-reference/models/list); every `POST /v1/chat/completions` gets the
server's `shape`:

- `trickle`: the status line and headers at once, then a body of one byte every `interval_s`, for ever (JSON
  allows the leading whitespace, so every byte is a valid start of a reply);
- `slow_header`: the status line, then one header byte every `interval_s`, for ever;
- `huge`: a well-formed chat completion of `huge_bytes` (its content one long string), at full speed.

It counts the connections whose client went away while it was still sending."""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.helpers.loopback_server import LoopbackServer, ModelsHandler

HUGE_CHUNK = 1 << 20


def completion_around(content_bytes: int) -> tuple[bytes, bytes]:
    """The bytes before and after a content string of `content_bytes` characters in a chat completion."""
    message = {"role": "assistant", "content": "@"}
    body = {
        "id": "chatcmpl-huge",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "test-model",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    }
    head, tail = json.dumps(body).split("@")
    assert content_bytes > 0
    return head.encode(), tail.encode()


class HostileServer(LoopbackServer):
    def __init__(self, shape: str, interval_s: float = 2.0, huge_bytes: int = 100 * 10**6) -> None:
        self.shape = shape
        self.interval_s = interval_s
        self.huge_bytes = huge_bytes
        self.requests = 0
        self.closed_by_client = 0
        """Replies the client stopped reading (its connection gone) before they were complete."""
        super().__init__()

    def _count(self, requests: int = 0, closed: int = 0) -> None:
        with self._lock:
            self.requests += requests
            self.closed_by_client += closed

    def _send_slowly(self, write: Any, byte: bytes) -> None:
        """`byte` every `interval_s` until the client goes or the server stops."""
        while not self._stopped.wait(self.interval_s):
            write(byte)

    def _send_huge(self, write: Any) -> None:
        head, tail = completion_around(self.huge_bytes)
        content = self.huge_bytes - len(head) - len(tail)
        write(head)
        chunk = b"A" * HUGE_CHUNK
        for _ in range(content // HUGE_CHUNK):
            write(chunk)
        write(b"A" * (content % HUGE_CHUNK) + tail)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(ModelsHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                server._count(requests=1)
                self.close_connection = True

                def write(data: bytes) -> None:
                    self.wfile.write(data)
                    self.wfile.flush()

                try:
                    if server.shape == "slow_header":
                        write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
                        server._send_slowly(write, b"a")
                    elif server.shape == "trickle":
                        write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n")
                        server._send_slowly(write, b" ")
                    else:
                        headers = f"Content-Type: application/json\r\nContent-Length: {server.huge_bytes}\r\n"
                        write(f"HTTP/1.1 200 OK\r\n{headers}\r\n".encode())
                        server._send_huge(write)
                except OSError:  # broken pipe, reset: the client stopped reading
                    server._count(closed=1)

        return Handler
