"""A local OpenAI-compatible server for tests: scripted replies and injected faults, as chat completions or
as the Responses API (where litellm sends reasoning models that get tools, e.g. openai/gpt-5.5).

litellm talks to it over real HTTP (`--model openai/NAME --api-base http://127.0.0.1:PORT/v1`). The shapes it
answers in are OpenAI's own:
- https://platform.openai.com/docs/api-reference/chat/object: the chat completion, its tool calls and usage;
- https://platform.openai.com/docs/api-reference/responses/object: the Responses API object and its output items;
- https://platform.openai.com/docs/guides/error-codes: an error's status and `{"error": {"message", "type", ...}}`
  body, 429s with their Retry-After.
What a provider may refuse is not checked here: that is `tests/helpers/providers/`, each fake naming its pages.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.helpers.loopback_server import LoopbackHTTPServer


@dataclass
class Step:
    """One response: a reply (text and/or one bash tool call), or a fault (status, headers, message)."""

    text: str | None = None
    bash: str | None = None
    reasoning: str | None = None
    """Sent as the message's `reasoning_content` (DeepSeek, SGLang), or as a reasoning item (Responses API)."""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    error: str = ""
    delay_s: float = 0.0
    usage: dict[str, Any] = field(default_factory=lambda: {"prompt_tokens": 120, "completion_tokens": 30})
    body: dict[str, Any] = field(default_factory=dict)
    """Fields that replace the completion's own, for malformed replies (e.g. `{"choices": []}`)."""
    error_body: dict[str, Any] | None = None
    """A fault's whole JSON body, in its provider's own shape (None: OpenAI's `{"error": {...}}`)."""


def reply(text: str | None = None, bash: str | None = None, reasoning: str | None = None, **usage: Any) -> Step:
    usage = {"prompt_tokens": 120, "completion_tokens": 30, **usage}
    return Step(text=text, bash=bash, reasoning=reasoning, usage=usage)


def malformed(**body: Any) -> Step:
    """A 200 reply whose fields in `body` replace the well-formed ones."""
    return Step(text="", body=body)


def fault(status: int, error: str, headers: dict[str, str] | None = None) -> Step:
    return Step(status=status, error=error, headers=headers or {})


CONTEXT_OVERFLOW = fault(
    400, "This model's maximum context length is 8192 tokens. However, your messages resulted in 9100 tokens."
)


@dataclass
class RandomFaults:
    """A share of the requests fails with `status` after `delay_s` (seeded, so a run's faults repeat)."""

    rate: float
    status: int = 500
    delay_s: float = 0.0
    seed: int = 0
    _random: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)

    def next_fails(self) -> bool:
        return self._random.random() < self.rate


def two_step_agent(request: dict[str, Any]) -> Step:
    """A conversation-driven reply: read the ledger, then answer 42 once a tool result is in the conversation."""
    if any(message.get("role") == "tool" for message in request["messages"]):
        return reply("40 + 2 = <answer>42</answer>")
    return reply(bash="cat documents/ledger.md")


class ScriptedOpenAIServer:
    def __init__(self) -> None:
        self.steps: deque[Step] = deque()
        self.respond: Callable[[dict[str, Any]], Step] | None = None
        """The reply to a request once the scripted steps ran out (None: a 500 saying so)."""
        self.reply_delay_s = 0.0
        """Added before every successful reply that `respond` makes."""
        self.faults: RandomFaults | None = None
        self.rejected_keys: set[str] = set()
        """API keys answered with 401 (an invalid key)."""
        self.concurrency_limit: int | None = None
        """Requests answered at once; one more is a 429 with `Retry-After: retry_after_s`."""
        self.retry_after_s = 1
        self.refused = 0
        """429s sent for the concurrency limit."""
        self.answering = 0
        self._answering_area = 0.0
        self._answering_since = time.monotonic()
        self._first_answer: float | None = None
        self._last_answer = 0.0
        self.models_busy = False
        """`GET /v1/models` takes the connection and answers nothing until the server stops (llama.cpp's while it
        still generates a reply a stopped run abandoned); else it is a 501, as before any GET was answered."""
        self._stopped = threading.Event()
        self.requests: list[dict[str, Any]] = []
        self.authorizations: list[str] = []
        """Each request's Authorization header (the key it was called with)."""
        self.in_flight = 0
        self.max_concurrent = 0
        """The most requests the server was answering at once."""
        self._count_lock = threading.Lock()
        self._server = LoopbackHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def push(self, *steps: Step) -> None:
        self.steps.extend(steps)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if server.models_busy:
                    server._stopped.wait()
                    return
                self.send_error(501)

            def do_POST(self) -> None:
                with server._count_lock:
                    server.in_flight += 1
                    server.max_concurrent = max(server.max_concurrent, server.in_flight)
                try:
                    if not server._answer_with_limit(self._answer):
                        self.rfile.read(int(self.headers["Content-Length"]))
                        retry = {"Retry-After": str(server.retry_after_s)}
                        self._send(429, {"error": {"message": "too many requests", "type": "rate_limit"}}, retry)
                finally:
                    with server._count_lock:
                        server.in_flight -= 1

            def _answer(self) -> Callable[[], None]:
                """Read the request and make the answer; returns what sends it (the server's work is done then)."""
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                server.authorizations.append(self.headers.get("Authorization", ""))
                step = server._step_for(body, self.headers.get("Authorization", ""), self.path)
                time.sleep(step.delay_s)
                if step.status != 200:
                    payload = step.error_body or {
                        "error": {"message": step.error, "type": "invalid_request_error", "code": None}
                    }
                    return lambda: self._send(step.status, payload, step.headers)
                answer = _response if self.path.endswith("/responses") else _completion
                made = answer(body, step)
                return lambda: self._send(200, made, step.headers)

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str]) -> None:
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
                    pass  # the client gave up (a timeout test)

        return Handler

    def mean_answering(self) -> float:
        """Requests answered at once (429s excluded), averaged from the first answer's start to the last one's end."""
        with self._count_lock:
            self._count_answering(0)
            if self._first_answer is None:
                return 0.0
            return self._answering_area / max(self._last_answer - self._first_answer, 1e-9)

    def _count_answering(self, change: int) -> None:
        now = time.monotonic()
        self._answering_area += self.answering * (now - self._answering_since)
        self._answering_since = now
        self.answering += change
        if change > 0 and self._first_answer is None:
            self._first_answer = now
        if change < 0:
            self._last_answer = now

    def _answer_with_limit(self, answer: Callable[[], Callable[[], None]]) -> bool:
        """Make the answer as one of the requests answered at once, then send it (a server's place is free once
        its answer is made); False (nothing sent) past the concurrency limit."""
        with self._count_lock:
            if self.concurrency_limit is not None and self.answering >= self.concurrency_limit:
                self.refused += 1
                return False
            self._count_answering(1)
        try:
            send = answer()
        finally:
            with self._count_lock:
                self._count_answering(-1)
        send()
        return True

    def _step_for(self, request: dict[str, Any], authorization: str, path: str) -> Step:
        """The answer to one request (`path` for a provider fake that serves only its own endpoint)."""
        if authorization.removeprefix("Bearer ") in self.rejected_keys:
            return fault(401, "Incorrect API key provided")
        with self._count_lock:
            if self.steps:
                return self.steps.popleft()
            failing = self.faults is not None and self.faults.next_fails()
        if self.faults is not None and failing:
            failed = fault(self.faults.status, "injected fault")
            failed.delay_s = self.faults.delay_s
            return failed
        if self.respond is None:
            return fault(500, "the test script ran out")
        step = self.respond(request)
        step.delay_s += self.reply_delay_s
        return step


def _completion(request: dict[str, Any], step: Step) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": step.text}
    if step.reasoning is not None:
        message["reasoning_content"] = step.reasoning
    if step.bash is not None:
        arguments = json.dumps({"command": step.bash})
        message["tool_calls"] = [
            {
                "id": f"call_{time.monotonic_ns()}",
                "type": "function",
                "function": {"name": "bash", "arguments": arguments},
            }
        ]
    usage = dict(step.usage)
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if step.bash else "stop"}],
        "usage": {
            "prompt_tokens": usage.get("prompt_tokens", 0),
            "completion_tokens": usage.get("completion_tokens", 0),
            "total_tokens": usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0),
            "prompt_tokens_details": {
                "cached_tokens": usage.get("cached_tokens", 0),
                "cache_creation_tokens": usage.get("cache_write_tokens", 0),
            },
            "completion_tokens_details": {"reasoning_tokens": usage.get("reasoning_tokens", 0)},
            "cache_creation_input_tokens": usage.get("cache_write_tokens", 0),
        },
        **step.body,
    }


def _response(request: dict[str, Any], step: Step) -> dict[str, Any]:
    """The same step as a Responses API object."""
    output: list[dict[str, Any]] = []
    if step.reasoning is not None:
        summary = [{"type": "summary_text", "text": step.reasoning}]
        output.append(
            {"type": "reasoning", "id": f"rs_{time.monotonic_ns()}", "summary": summary, "encrypted_content": "opaque"}
        )
    if step.text:
        content = [{"type": "output_text", "text": step.text, "annotations": []}]
        output.append(
            {"type": "message", "id": "msg_test", "role": "assistant", "status": "completed", "content": content}
        )
    if step.bash is not None:
        call_id = f"call_{time.monotonic_ns()}"
        output.append(
            {
                "type": "function_call",
                "id": f"fc_{call_id}",
                "call_id": call_id,
                "name": "bash",
                "arguments": json.dumps({"command": step.bash}),
                "status": "completed",
            }
        )
    usage = dict(step.usage)
    return {
        "id": "resp_test",
        "object": "response",
        "created_at": int(time.time()),
        "status": "completed",
        "model": request["model"],
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": request.get("tools", []),
        "usage": {
            "input_tokens": usage.get("prompt_tokens", 0),
            "output_tokens": usage.get("completion_tokens", 0),
            "total_tokens": usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0),
            "input_tokens_details": {"cached_tokens": usage.get("cached_tokens", 0)},
            "output_tokens_details": {"reasoning_tokens": usage.get("reasoning_tokens", 0)},
        },
        **step.body,
    }
