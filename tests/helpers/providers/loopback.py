"""What every provider fake shares: a real HTTP server on loopback answering one provider's API from a script of
turns, checking each request against that provider's rules and answering a broken rule with its 400."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Turn:
    """What the model says in one reply, in no provider's shape."""

    text: str = ""
    commands: tuple[str, ...] = ()
    """One bash tool call per command; more than one is a parallel call."""
    thinking: str = "Reading the documents first."
    finish: str = "stop"
    """`stop`, or how the reply was cut short: `length`, `safety` (a blocked reply, no content)."""
    arguments: str | None = None
    """Raw argument text of the first call instead of the command's JSON (a malformed call)."""


@dataclass(frozen=True)
class Fault:
    """An error the provider answers instead of a reply."""

    status: int
    message: str
    headers: dict[str, str] = field(default_factory=dict)
    details: tuple[dict[str, Any], ...] = ()
    """Extra error details where the provider has them (Gemini's RetryInfo)."""
    code: str | None = None
    """The error's code where the provider has one (OpenAI's `context_length_exceeded`)."""


VIEW = "view_image:"
"""A command of a `Turn` that starts with this is a view_image call of the path after it, not a bash call."""


def tool_call_of(command: str) -> tuple[str, dict[str, str]]:
    """The tool and arguments a `Turn`'s command stands for: bash, or view_image for `VIEW + path`."""
    if command.startswith(VIEW):
        return "view_image", {"path": command.removeprefix(VIEW)}
    return "bash", {"command": command}


Script = Callable[[int], Turn]
"""The reply for a request that continues a conversation of N model turns."""


class ProviderRuleBroken(Exception):
    """A request broke a documented rule: the provider's 400 with this message."""


def sign(secret: bytes, *parts: str) -> str:
    """An opaque signature over `parts`, as the provider's own encrypted state is opaque to the client."""
    digest = hmac.new(secret, "\x1f".join(parts).encode(), hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


class LoopbackProvider:
    """One provider's API on 127.0.0.1 (port 0). Subclasses say how to read and answer a request."""

    path_suffix = ""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.faults: dict[int, Fault] = {}
        """Request number (1-based, every request counted) -> the fault answered instead."""
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.last_images: list[Any] = []
        """The images of the latest request that passed its checks (image_rules.FoundImage), for a script that
        reads them."""
        self.rule_breaks: list[str] = []
        """`request N: message` for every request refused for a broken rule."""
        self.degraded: list[str] = []
        """`request N: where` for what the provider accepts at a cost to the model's reasoning (a signature or
        reasoning item not sent back as given)."""
        self.secret = b"loopback-" + str(id(self)).encode()
        self._lock = threading.Lock()
        self._seen = threading.Condition(self._lock)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> LoopbackProvider:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def wait_for_requests(self, count: int, timeout_s: float) -> bool:
        """Whether `count` requests came within `timeout_s` seconds."""
        with self._seen:
            return self._seen.wait_for(lambda: len(self.requests) >= count, timeout_s)

    def check(self, body: dict[str, Any]) -> None:
        """Raise `ProviderRuleBroken` for the first documented rule the request breaks."""
        raise NotImplementedError

    def model_turns(self, body: dict[str, Any]) -> int:
        """How many model turns the request's conversation holds."""
        raise NotImplementedError

    def answer(self, body: dict[str, Any], turn: Turn, path: str) -> dict[str, Any]:
        raise NotImplementedError

    def error_body(self, fault: Fault) -> dict[str, Any]:
        raise NotImplementedError

    def respond(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
        with self._lock:
            self.requests.append(body)
            self.paths.append(path)
            number = len(self.requests)
            self._seen.notify_all()
        if not path.split("?")[0].endswith(self.path_suffix):
            return 404, self.error_body(Fault(404, f"no such path {path}")), {}
        fault = self.faults.get(number)
        if fault is not None:
            return fault.status, self.error_body(fault), fault.headers
        try:
            self.check(body)
        except ProviderRuleBroken as broken:
            with self._lock:
                self.rule_breaks.append(f"request {number}: {broken}")
            return 400, self.error_body(Fault(400, str(broken))), {}
        return 200, self.answer(body, self.script(self.model_turns(body)), path), {}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                status, payload, headers = provider.respond(self.path, body)
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (it was killed)

        return Handler
