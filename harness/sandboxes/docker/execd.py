"""The runner's side of `harness-execd` (sandbox_templates/), the command server a Docker sandbox keeps.

One attached `docker exec` per episode starts the server as root; each command is then a request on that
connection. A `docker exec` costs about 45 ms of the engine's and runc's time whatever it runs, which was
nearly all of a step. The server runs each command as a fresh `bash -c` process of the agent user and
kills every process of that user before it answers (see its docstring for the frames both ways, the
scratch space it lays out at start, and the OOM score of commands). When its stream ends, the error says
its exit status; `docker.py` then asks the engine whether it was killed for memory.
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass
from typing import Any

from harness.sandboxes.base import SandboxError
from harness.sandboxes.output import HeadTail

SERVER = "/usr/local/bin/harness-execd"
_FRAME = struct.Struct(">cI")
_DOCKER_FRAME = struct.Struct(">BxxxI")
"""Docker's multiplexing header on an attached exec without a tty: stream (1 stdout, 2 stderr), size."""
_STARTUP_S = 30.0
_STDERR_KEPT = 2000
"""Bytes of the server's own stderr kept for the error message when it fails."""


class ExecdConnection:
    """The socket of the server's exec: requests written raw to its stdin, frames read from its stdout."""

    def __init__(self, api: Any, exec_id: str, sock: Any):
        self._api = api
        self._exec_id = exec_id
        self._sock: socket.socket = getattr(sock, "_sock", sock)  # docker-py hands a SocketIO over a socket
        self._raw = sock  # keeps docker-py's response (and so the connection) alive
        self._docker = bytearray()
        self._frames = bytearray()
        self._stderr = bytearray()
        self.busy = False
        """A command was sent and its X not read yet: the connection is out of step until it is."""

    @classmethod
    def open(cls, api: Any, container_id: str, user: str, uid: int, workdir: str) -> ExecdConnection:
        """Start the server in the container, running commands as `user` with `uid`, and wait for its hello;
        raises `SandboxError`."""
        server = [SERVER, user, str(uid)]
        try:
            exec_id = api.exec_create(container_id, server, user="0:0", workdir=workdir, stdin=True)["Id"]
            sock = api.exec_start(exec_id, socket=True)
        except Exception as error:  # docker.errors.APIError: no such file, container gone
            raise SandboxError(f"cannot start {SERVER}: {getattr(error, 'explanation', None) or error}") from None
        connection = cls(api, exec_id, sock)
        connection._sock.settimeout(_STARTUP_S)
        connection.send(b"H")
        kind, _ = connection.receive()
        if kind != b"H":
            raise SandboxError(f"{SERVER} answered {kind!r} to its hello")
        connection._sock.settimeout(None)  # a command's output may pause for as long as its limit
        return connection

    def send(self, kind: bytes, payload: bytes = b"") -> None:
        try:
            self._sock.sendall(_FRAME.pack(kind, len(payload)) + payload)
        except OSError as error:
            raise SandboxError(f"{SERVER} is unreachable: {error}") from None

    def receive(self) -> tuple[bytes, bytes]:
        """The server's next frame; raises `SandboxError` when its stream ends (the server died)."""
        while (frame := self._next_frame()) is None:
            try:
                data = self._sock.recv(1 << 16)
            except OSError as error:  # socket.timeout included
                raise SandboxError(f"{SERVER} did not answer: {error}") from None
            if not data:
                raise SandboxError(self._ended())
            self._docker += data
            self._unwrap()
        return frame

    def _unwrap(self) -> None:
        """Move complete Docker frames to the server's stdout bytes (or its stderr tail)."""
        while len(self._docker) >= _DOCKER_FRAME.size:
            stream, size = _DOCKER_FRAME.unpack_from(self._docker)
            if len(self._docker) < _DOCKER_FRAME.size + size:
                return
            payload = self._docker[_DOCKER_FRAME.size : _DOCKER_FRAME.size + size]
            del self._docker[: _DOCKER_FRAME.size + size]
            if stream == 2:
                self._stderr = (self._stderr + payload)[-_STDERR_KEPT:]
            else:
                self._frames += payload

    def _next_frame(self) -> tuple[bytes, bytes] | None:
        if len(self._frames) < _FRAME.size:
            return None
        kind, size = _FRAME.unpack_from(self._frames)
        if len(self._frames) < _FRAME.size + size:
            return None
        payload = bytes(self._frames[_FRAME.size : _FRAME.size + size])
        del self._frames[: _FRAME.size + size]
        return kind, payload

    def _ended(self) -> str:
        try:
            code = self._api.exec_inspect(self._exec_id)["ExitCode"]
        except Exception:  # the container is gone too
            code = None
        detail = self._stderr.decode(errors="replace").strip().splitlines()
        return f"{SERVER} ended (exit status {code})" + (f": {detail[-1]}" if detail else "")

    def run(self, command: str, limit_s: float) -> _ExecdCommand:
        if self.busy:
            raise SandboxError(f"{SERVER} is still busy with a command that never ended")
        self.send(b"R", f"{limit_s:.3f}\n".encode() + command.encode(errors="replace"))
        self.busy = True
        return _ExecdCommand(self)

    def close(self) -> None:
        """The server sees its stdin end, kills the agent's processes and exits."""
        self._sock.close()
        self._raw.close()


@dataclass
class _ExecdCommand:
    """One command on the server (`remote_exec.RemoteCommand`)."""

    connection: ExecdConnection

    def wait(self, stdout: HeadTail, stderr: HeadTail) -> int:
        while True:
            kind, payload = self.connection.receive()
            if kind == b"O":
                stdout.feed(payload)
            elif kind == b"E":
                stderr.feed(payload)
            elif kind == b"X":
                self.connection.busy = False
                return int(payload)
            else:
                raise SandboxError(f"{SERVER} sent an unknown frame {kind!r}")

    def kill(self) -> None:
        self.connection.send(b"K")
