"""Exact file opens in a collection folder, seen from the host with inotify (Linux).

The sandbox reads the collection through a bind mount of the host folder: the same inodes, so the host's
inotify watch sees every open the agent makes. The host cannot tell which sandbox opened a file, so this
is used only when one sandbox runs at a time, on a backend whose mounts are on this host (local, or a
Docker engine on a local socket). The kernel queue holds 16384 events by default; an overflow makes the
record unusable (None), and the episode falls back to the command-and-output method.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import struct
from collections.abc import Callable
from pathlib import Path

from harness.sandboxes.base import ExecResult, Sandbox

_IN_OPEN = 0x00000020
_IN_Q_OVERFLOW = 0x00004000
_IN_ISDIR = 0x40000000
_IN_NONBLOCK = 0o4000
_IN_CLOEXEC = 0o2000000
_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len


def watched(sandbox: Sandbox, collection: Path, turn: Callable[[], int]) -> WatchedSandbox | Sandbox:
    """The sandbox with its opens recorded, or the sandbox itself where inotify cannot be set up."""
    try:
        return WatchedSandbox(sandbox, _OpenWatch(collection), turn)
    except OSError:  # no inotify (or out of watches): the command-and-output method stands
        return sandbox


class _OpenWatch:
    """Collects the files opened under a folder; `drain()` returns those opened since the last call."""

    def __init__(self, folder: Path):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        self._fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if self._fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self._dirs: dict[int, str] = {}
        self.overflowed = False
        for directory in [folder, *(p for p in folder.rglob("*") if p.is_dir())]:
            wd = libc.inotify_add_watch(self._fd, os.fsencode(directory), _IN_OPEN)
            if wd < 0:
                os.close(self._fd)
                raise OSError(ctypes.get_errno(), f"inotify_add_watch failed on {directory}")
            relative = directory.relative_to(folder)
            self._dirs[wd] = "" if relative == Path(".") else f"{relative}/"

    def drain(self) -> set[str]:
        opened: set[str] = set()
        while True:
            try:
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                return opened
            offset = 0
            while offset < len(data):
                wd, mask, _, length = _HEADER.unpack_from(data, offset)
                name = data[offset + _HEADER.size : offset + _HEADER.size + length].rstrip(b"\0")
                offset += _HEADER.size + length
                if mask & _IN_Q_OVERFLOW:
                    self.overflowed = True
                elif name and wd in self._dirs and not mask & _IN_ISDIR:  # listing a folder reads no document
                    opened.add(self._dirs[wd] + os.fsdecode(name))

    def close(self) -> None:
        os.close(self._fd)


class WatchedSandbox:
    """A sandbox whose commands' file opens are recorded with the turn that ran them."""

    def __init__(self, sandbox: Sandbox, watch: _OpenWatch, turn: Callable[[], int]):
        self._sandbox, self._watch, self._turn = sandbox, watch, turn
        self.first_open: dict[str, int] = {}
        """Collection file -> the turn whose command first opened it."""

    def execute(self, command: str, timeout_s: float) -> ExecResult:
        self._watch.drain()  # opens between commands are not the agent's (nothing of ours reads the collection)
        result = self._sandbox.execute(command, timeout_s)
        turn = self._turn()
        for name in self._watch.drain():
            self.first_open.setdefault(name, turn)
        return result

    def read_bytes(self, path: str, max_bytes: int, timeout_s: float) -> bytes:
        """A file the agent asked to see: its opens are the agent's, as a command's."""
        self._watch.drain()
        try:
            return self._sandbox.read_bytes(path, max_bytes, timeout_s)
        finally:
            turn = self._turn()
            for name in self._watch.drain():
                self.first_open.setdefault(name, turn)

    def opens(self) -> dict[str, int] | None:
        """The first-open turns, None when the kernel queue overflowed (the record is incomplete)."""
        return None if self._watch.overflowed else self.first_open

    def close(self) -> None:
        try:
            self._sandbox.close()
        finally:
            self._watch.close()

    def start(self) -> None:
        self._sandbox.start()

    def describe(self) -> dict[str, object]:
        return self._sandbox.describe()
