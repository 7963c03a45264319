"""The episode's model served to an agent that runs inside its sandbox, on a unix socket in the folder the sandbox
mounts (sandboxes/model_socket.py), in the API the agent speaks: OpenAI's chat completions
(`POST /v1/chat/completions`), Anthropic's messages (`POST /v1/messages`) or Gemini's generate content
(`POST /v1beta/models/{model}:generateContent`, `:streamGenerateContent`), as one JSON reply or, asked for,
an event stream (the whole reply sent as one stream once the model has answered).

Each request is one call of the query step (episode/query.py), so an installed agent's calls are our agent's: the
run's model and provider settings, its connection slots, retries and pacing, the episode's budgets, one
`model_call` event each. The provider's key stays in the runner: the agent sends none and is sent none. Once
the episode has ended (a budget ran out, the run was cancelled, the provider failed) every request is refused
with 403, so the agent stops; `ended` says why, for the solver's outcome. Nothing an agent sends raises here: a
request that is not one is refused to the agent (400, the field named), never an error of ours.
"""

from __future__ import annotations

import contextlib
import json
import socketserver
import threading
from collections.abc import Mapping, Sequence
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, Protocol

from harness.core.messages import Message, ToolCallEntry
from harness.core.reply import ToolCall
from harness.core.status import EpisodeFailure, EpisodeFinished
from harness.episode.actions import FormatError
from harness.episode.budget import Budget
from harness.episode.proxy import anthropic_messages, gemini_generate, openai_chat
from harness.episode.proxy.request import RequestRefused, Wire, json_object
from harness.episode.query import query_model
from harness.models.base import Model, ModelReply
from harness.records.compact import compact_messages
from harness.records.events import ActionEvent, ObservationEvent
from harness.records.trajectory import TrajectoryLog

WIRES: dict[str, Wire] = {
    "/v1/chat/completions": openai_chat.WIRE,
    "/chat/completions": openai_chat.WIRE,
    "/v1/messages": anthropic_messages.WIRE,
}
"""The paths served, each in its API (and Gemini's, `gemini_generate.PATH`)."""
MAX_REQUEST_BYTES = 8 * 1024 * 1024
"""A longer body is refused (413): past a million-token window, and what one call may add to the trajectory (the
agent sends its tool results and may rewrite its history, all of which the call's event logs)."""
MAX_CONNECTIONS = 8
"""Connections served at once (an agent makes one call at a time; its client may keep a few open)."""
_POLL_S = 0.1
"""How often the server looks whether it was shut down (the solver's end waits for it)."""
_CONNECTION_TIMEOUT_S = 60.0
"""A connection that sends nothing for this long is closed (a stuck client holds no thread for ever)."""


class OfferedTool(Protocol):
    """A tool the run's model is offered (an `AgentTool` of episode/solvers/tools.py): its name, and its call's
    argument (bash's command), read for the trajectory's `action` event."""

    @property
    def name(self) -> str: ...

    def read(self, call: ToolCall) -> str: ...


class ModelProxy:
    """Serves one episode's model on SOCKET while in a `with` block, one call at a time. Besides each call's
    `model_call` event it logs what the calls carry, as our agent's episodes have it: an `action` event per tool
    call of a reply (the command the model asked for), and an `observation` event per tool result the agent sends
    back (what the model was shown; the agent's report of it, so its exit code and time are unknown)."""

    def __init__(
        self,
        socket: Path,
        model: Model,
        budget: Budget,
        log: TrajectoryLog,
        tools: Sequence[OfferedTool],
        aliases: Mapping[str, str] | None = None,
    ):
        self._socket, self._model, self._budget, self._log = socket, model, budget, log
        self._tools = {tool.name: tool for tool in tools}
        """The tools the run's model is offered: an agent that offers its model another is refused."""
        self._aliases = dict(aliases or {})
        """The agent's name of a tool of the run's -> the run's (Gemini CLI's `run_shell_command` is bash): the
        run's model sees its own names, the agent its own."""
        self._lock = threading.Lock()
        self._sent = 0
        """Messages of the agent's conversation already in the trajectory (the reply after them is the call's)."""
        self.ended: EpisodeFinished | EpisodeFailure | None = None
        """Why the episode ended during a call (a budget, a cancellation, the provider); None while it has not."""
        self._closed = False
        self._server: _UnixHTTPServer | None = None

    def __enter__(self) -> ModelProxy:
        self._server = _UnixHTTPServer(str(self._socket), _handler(self))
        self._socket.chmod(0o666)  # the agent runs as a user of its own; the folder is its only way in
        serve = threading.Thread(target=self._server.serve_forever, args=(_POLL_S,), name="model-proxy", daemon=True)
        serve.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with self._lock:  # a call in flight ends first (within the budget's time): its event precedes the episode's end
            self._closed = True
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        with contextlib.suppress(FileNotFoundError):
            self._socket.unlink()

    def answer(self, wire: Wire, body: bytes, stream: bool | None = None) -> tuple[int, dict[str, Any] | str]:
        """The status and body of the response to one request of WIRE's API: JSON, or the text of an event stream
        for a request that asked for one (STREAM: its path did; None: its body's `stream` says)."""
        with self._lock:
            if self.ended is not None or self._closed:
                return 403, wire.error_body(403, f"the episode has ended: {self._why()}")
            try:
                fields = json_object(body)
                request = wire.read_request(fields)
                self._check_tools(tuple(self._aliases.get(name, name) for name in request.tool_names))
            except RequestRefused as refused:
                return refused.status, wire.error_body(refused.status, str(refused))
            messages = [self._as_run_names(message) for message in request.messages]
            new = messages[self._sent + 1 :] if 0 < self._sent < len(messages) else messages
            self._log_results(new)
            try:
                reply = query_model(self._model, messages, self._budget, self._log, compact_messages(new, None))
            except (EpisodeFinished, EpisodeFailure) as end:
                self.ended = end
                return 403, wire.error_body(403, f"the episode has ended: {self._why()}")
            self._sent = len(messages)
            self._log_actions(reply)
            streamed = fields.get("stream") is True if stream is None else stream
            answered = wire.stream_body if streamed else wire.reply_body
            return 200, answered(self._as_agent_names(reply), self._budget.turns, self._model.name)

    def _as_run_names(self, message: Message) -> Message:
        calls = message.get("tool_calls")
        if not calls or not self._aliases:
            return message
        renamed: list[ToolCallEntry] = []
        for call in calls:
            name = call["function"]["name"]
            renamed.append(call | {"function": call["function"] | {"name": self._aliases.get(name, name)}})
        return message | {"tool_calls": renamed}

    def _as_agent_names(self, reply: ModelReply) -> ModelReply:
        back = {run: agent for agent, run in self._aliases.items()}
        if not any(call.name in back for call in reply.tool_calls):
            return reply
        calls = [call.model_copy(update={"name": back.get(call.name, call.name)}) for call in reply.tool_calls]
        return reply.model_copy(update={"tool_calls": calls})

    def _log_actions(self, reply: ModelReply) -> None:
        for call in reply.tool_calls:
            tool = self._tools.get(call.name)
            try:
                argument = tool.read(call) if tool is not None else None
            except FormatError:  # the agent tells its model; nothing ran
                argument = None
            if argument is not None:
                self._log.write(ActionEvent(turn=self._budget.turns, command=argument))

    def _log_results(self, messages: list[Message]) -> None:
        if not self._budget.turns:
            return
        for message in messages:
            text = message.get("content")
            if message["role"] == "tool" and isinstance(text, str):
                self._log.write(ObservationEvent.reported(self._budget.turns, text))

    def _check_tools(self, offered: tuple[str, ...]) -> None:
        unknown = sorted(set(offered) - set(self._tools))
        if unknown:
            tools = ", ".join(self._tools) or "none"
            raise RequestRefused(400, f"field 'tools': {unknown[0]} is not a tool of the run's model (it has: {tools})")

    def _why(self) -> str:
        if isinstance(self.ended, EpisodeFinished):
            status = self.ended.status.value
            return f"{status} ({self.ended.detail})" if self.ended.detail else status
        if self.ended is not None:  # the provider's own words stay with us: they may name its host, or a key's end
            return self.ended.status.value
        return "the agent's time is over"


class _UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """A thread per connection, at most `MAX_CONNECTIONS` at once: an agent cannot make the runner start a thread
    per socket it opens (one more is closed unanswered)."""

    daemon_threads = True

    def __init__(self, path: str, handler: type[BaseHTTPRequestHandler]):
        super().__init__(path, handler)
        self._connections = threading.BoundedSemaphore(MAX_CONNECTIONS)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._connections.acquire(blocking=False):
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._connections.release()


def _handler(proxy: ModelProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        timeout = _CONNECTION_TIMEOUT_S

        def do_POST(self) -> None:
            path = self.path.split("?")[0]
            gemini = gemini_generate.PATH.fullmatch(path)
            wire = gemini_generate.WIRE if gemini else WIRES.get(path)
            if wire is None:
                served = ", ".join([*WIRES, "/v1beta/models/{model}:generateContent"])
                self._send(404, openai_chat.error_body(404, f"no such endpoint (served: {served})"))
                return
            try:
                length = int(self.headers.get("Content-Length", ""))
            except ValueError:
                self._send(411, wire.error_body(411, "a request needs its Content-Length"))
                return
            if not 0 <= length <= MAX_REQUEST_BYTES:
                self._send(413, wire.error_body(413, f"a request of at most {MAX_REQUEST_BYTES} bytes"))
                return
            stream = gemini["method"] == "streamGenerateContent" if gemini else None
            self._send(*proxy.answer(wire, self.rfile.read(length), stream))

        def do_GET(self) -> None:
            self._send(404, openai_chat.error_body(404, f"only POST is served, to {', '.join(WIRES)}"))

        def _send(self, status: int, payload: dict[str, Any] | str) -> None:
            streamed = isinstance(payload, str)
            data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the agent gave up or was ended
                self.send_response(status)
                self.send_header("Content-Type", "text/event-stream" if streamed else "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            """Calls are recorded as events, not printed (and a unix socket's client has no address to print)."""

    return Handler
