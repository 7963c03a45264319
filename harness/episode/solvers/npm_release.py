"""An installed agent released on npm (Gemini CLI, Claude Code): the pinned release a user installs on the host,
named by a variable, found and checked before anything is written; with the runtime it runs on, when that is an npm
package too (Gemini CLI's Node), installed beside it by the same command."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from harness.core.errors import InputError


@dataclass(frozen=True)
class NpmPackage:
    name: str
    version: str
    """The release our settings were written for (its files read for them): another is refused."""
    entry: str
    """A file the package holds (its program), relative to its folder."""

    def check(self, folder: Path, where: str) -> None:
        """Refuse (one line naming WHERE) a FOLDER that is not this release with its program."""
        try:
            package = json.loads((folder / "package.json").read_text())
        except (OSError, ValueError):
            raise InputError(f"{where}: no package.json of {self.name} there") from None
        named = package.get("name") if isinstance(package, dict) else None
        version = package.get("version") if isinstance(package, dict) else None
        if named != self.name or version != self.version or not (folder / self.entry).is_file():
            raise InputError(f"{where}: not {self.name} {self.version}")


@dataclass(frozen=True)
class NpmRelease:
    solver: str
    """The solver's name (`gemini-cli`)."""
    installed: str
    """What `npm install` is told to install (`@google/gemini-cli`)."""
    package: NpmPackage
    """The package whose folder is the install (the installed one, or its native part: Claude Code's binary)."""
    variable: str
    """The environment variable naming the package's folder on the host."""
    runtime: NpmPackage | None = None
    """The package the agent runs on, installed beside it in the same `node_modules` (Gemini CLI's Node)."""

    @property
    def version(self) -> str:
        return self.package.version

    def folder(self) -> Path:
        """The package's folder on the host, checked: it is the pinned release and holds its program (and its runtime
        is the one pinned)."""
        given = os.environ.get(self.variable)
        if not given:
            raise InputError(f"--solver {self.solver} needs {self.variable}: {self.how_to_install()}")
        folder = Path(given).resolve()
        try:
            self.package.check(folder, f"{self.variable}={given}")
            if self.runtime is not None:
                self.runtime.check(self.modules(folder) / self.runtime.name, f"beside {self.variable}={given}")
        except InputError as error:
            raise InputError(f"{error} ({self.how_to_install()})") from None
        return folder

    def shown(self) -> Path:
        """The folder the sandbox shows at /run/agent: the package's, or with a runtime, the `node_modules` holding
        both (checked as `folder` checks)."""
        folder = self.folder()
        return folder if self.runtime is None else self.modules(folder)

    def modules(self, folder: Path) -> Path:
        """The `node_modules` that holds the package's FOLDER (a scoped package is a folder deeper)."""
        return folder.parents[self.package.name.count("/")]

    def how_to_install(self) -> str:
        runtime = "" if self.runtime is None else f" {self.runtime.name}@{self.runtime.version}"
        return (
            f"npm install --prefix DIR {self.installed}@{self.version}{runtime} --ignore-scripts, "
            f"then {self.variable}=DIR/node_modules/{self.package.name}"
        )
