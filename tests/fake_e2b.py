"""A recording fake of the e2b SDK's classes, for testing our E2B code at the SDK boundary.

The cloud is unreachable here. `Sandbox.create` records its arguments; commands really run, through the
recipe's `harness-exec`, inside a local bubblewrap sandbox over the template's collection, and come
back as the SDK's own `CommandResult` / `CommandExitException`. `Template` is the real template builder
(it works offline) with the network calls `build` and `exists` recorded instead.
"""

from __future__ import annotations

import itertools
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import e2b

from harness.sandboxes import SandboxSettings
from harness.sandboxes.local import BubblewrapSandbox, find_bwrap
from harness.sandboxes.recipe import RECIPE_DIR

CommandExitException = e2b.CommandExitException
SandboxQuery = e2b.SandboxQuery
HARNESS_EXEC = (RECIPE_DIR / "harness-exec").read_text()
_FULL_OUTPUT = SandboxSettings(output_limit_bytes=1 << 30)
"""The real SDK streams all output; capping is our code's job."""


@dataclass
class Recorder:
    """What our code asked of the SDK."""

    templates: dict[str, Path] = field(default_factory=dict)
    """Template name -> the collection it was built with."""
    created: list[dict[str, Any]] = field(default_factory=list)
    commands: list[dict[str, Any]] = field(default_factory=list)
    killed: list[str] = field(default_factory=list)
    builds: list[dict[str, Any]] = field(default_factory=list)
    listed: list[Any] = field(default_factory=list)
    existing: list[Any] = field(default_factory=list)
    """SandboxInfo-like objects that `Sandbox.list` returns."""


RECORD = Recorder()
_ids = itertools.count(1)


@dataclass
class FakeSandboxInfo:
    sandbox_id: str
    metadata: dict[str, str]


class _Paginator:
    def __init__(self, items: list[Any]):
        self._items = items
        self.has_next = True

    def next_items(self) -> list[Any]:
        self.has_next = False
        return self._items


class _Handle:
    def __init__(self, box: BubblewrapSandbox, limit: str, command: str, timeout: float):
        self._result = box.execute(f'bash -c {shlex.quote(HARNESS_EXEC)} harness-exec {limit} {shlex.quote(command)}',
                                   timeout)  # fmt: skip
        self.killed = False

    def wait(self, on_pty: Any = None, on_stdout: Any = None, on_stderr: Any = None) -> e2b.CommandResult:
        result = self._result
        if on_stdout and result.stdout:
            on_stdout(result.stdout)
        if on_stderr and result.stderr:
            on_stderr(result.stderr)
        if result.exit_code != 0:
            raise CommandExitException(result.stderr, result.stdout, result.exit_code or -1, None)
        return e2b.CommandResult(result.stderr, result.stdout, 0, None)

    def kill(self) -> bool:
        self.killed = True
        return True


class _Commands:
    def __init__(self, sandbox: Sandbox):
        self._sandbox = sandbox

    def run(self, cmd: str, background: bool | None = None, user: str | None = None, cwd: str | None = None,
            timeout: float | None = 60, **options: Any) -> Any:  # fmt: skip
        RECORD.commands.append({"cmd": cmd, "background": background, "user": user, "cwd": cwd, "timeout": timeout})
        program, limit, command = shlex.split(cmd)
        assert program == "harness-exec", cmd
        handle = _Handle(self._sandbox.box, limit, command, timeout or 60)
        return handle if background else handle.wait()


class Sandbox:
    def __init__(self, template: str):
        self.sandbox_id = f"fake-{next(_ids)}"
        self.box = BubblewrapSandbox(RECORD.templates[template], self.sandbox_id, _FULL_OUTPUT, find_bwrap())
        self.box.start()
        self.commands = _Commands(self)

    @classmethod
    def create(cls, template: str | None = None, **options: Any) -> Sandbox:
        RECORD.created.append({"template": template, **options})
        return cls(template or "")

    @staticmethod
    def list(query: Any = None, **options: Any) -> _Paginator:
        RECORD.listed.append({"query": query, **options})
        wanted = query.metadata if query is not None else {}
        return _Paginator([i for i in RECORD.existing if all(i.metadata.get(k) == v for k, v in wanted.items())])

    def kill(self, sandbox_id: str | None = None, **options: Any) -> bool:
        if isinstance(self, str):  # called as Sandbox.kill(sandbox_id, ...), like the SDK allows
            RECORD.killed.append(self)
            return True
        RECORD.killed.append(self.sandbox_id)
        self.box.close()
        return True


class Template(e2b.Template):
    @staticmethod
    def build(template: Any, name: str | None = None, **options: Any) -> Any:
        RECORD.builds.append({"template": template, "name": name, **options})
        return type("BuildInfo", (), {"template_id": f"tmpl-{name}", "build_id": "build-1"})()

    @staticmethod
    def exists(name: str, **options: Any) -> bool:
        return name in RECORD.templates
