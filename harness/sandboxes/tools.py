"""The agent's tool set (sandbox_templates/tools.txt): the commands every backend must give it."""

from __future__ import annotations

import shlex
import shutil
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from harness.sandboxes.recipe import RECIPE_DIR

_TOOLS_FILE = RECIPE_DIR / "tools.txt"


@dataclass(frozen=True)
class Tool:
    command: str
    """What the agent types."""
    package: str
    """The Debian package that brings it."""
    program: str
    """Its program's name in that package (Debian names fd `fdfind`)."""


@cache
def tools() -> tuple[Tool, ...]:
    listed = []
    for line in _TOOLS_FILE.read_text(encoding="utf-8").splitlines():
        fields = line.split("#", 1)[0].split()
        if fields:
            command, package, *program = fields
            listed.append(Tool(command, package, program[0] if program else command))
    return tuple(listed)


def probe_command() -> str:
    """A shell command printing `name<TAB>path` for each tool found on the sandbox's PATH."""
    checks = [
        f"p=$(command -v {shlex.quote(tool.command)}) && printf '%s\\t%s\\n' {shlex.quote(tool.command)} \"$p\""
        for tool in tools()
    ]
    return "; ".join(checks) + "; true"


def found_tools(stdout: str) -> dict[str, str]:
    """The probe's output read back: command -> where it is."""
    found = {}
    for line in stdout.splitlines():
        name, _, path = line.partition("\t")
        if path:
            found[name] = path
    return found


def missing_tools(found: dict[str, str]) -> list[Tool]:
    return [tool for tool in tools() if tool.command not in found]


def host_aliases() -> dict[str, Path]:
    """For the local sandbox: each tool the host has only under its package's program name, and where."""
    aliases = {}
    for tool in tools():
        if tool.program != tool.command and shutil.which(tool.command, path="/usr/local/bin:/usr/bin:/bin") is None:
            program = shutil.which(tool.program, path="/usr/local/bin:/usr/bin:/bin")
            if program is not None:
                aliases[tool.command] = Path(program)
    return aliases
