"""An installed agent released on npm (Gemini CLI, Claude Code): the pinned release a user installs on the host,
named by a variable, found and checked before anything is written."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from harness.core.errors import InputError


@dataclass(frozen=True)
class NpmRelease:
    solver: str
    """The solver's name (`gemini-cli`)."""
    installed: str
    """What `npm install` is told to install (`@google/gemini-cli`)."""
    package: str
    """The package whose folder is the install (the installed one, or its native part: Claude Code's binary)."""
    version: str
    """The release our settings were written for (its files read for them): another is refused."""
    variable: str
    """The environment variable naming the package's folder on the host."""
    entry: str
    """A file the install holds (its program), relative to the folder."""

    def folder(self) -> Path:
        """The package's folder on the host, checked: it is the pinned release and holds its program."""
        given = os.environ.get(self.variable)
        if not given:
            raise InputError(f"--solver {self.solver} needs {self.variable}: {self.how_to_install()}")
        folder = Path(given).resolve()
        try:
            package = json.loads((folder / "package.json").read_text())
        except (OSError, ValueError):
            raise InputError(f"{self.variable}={given}: no package.json there ({self.how_to_install()})") from None
        named = package.get("name") if isinstance(package, dict) else None
        version = package.get("version") if isinstance(package, dict) else None
        if named != self.package or version != self.version or not (folder / self.entry).is_file():
            problem = f"not {self.package} {self.version}"
            raise InputError(f"{self.variable}={given}: {problem} ({self.how_to_install()})")
        return folder

    def how_to_install(self) -> str:
        return (
            f"npm install --prefix DIR {self.installed}@{self.version} --ignore-scripts, "
            f"then {self.variable}=DIR/node_modules/{self.package}"
        )
