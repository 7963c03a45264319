"""The foreign trajectory formats `import` reads and `export` writes: a name -> module table, each module a
`TrajectoryFormat`. A new format is a module and a line here; the engine (run_import.py) does the rest."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

if TYPE_CHECKING:
    from rich.console import Console

    from harness.interop.imported import ForeignFile


class TrajectoryFormat(Protocol):
    """A format, as a module: what its files look like, how one is read into episodes, how runs are written."""

    FORMAT: str
    """Its name in run.yaml's `imported` and in an imported episode's sandbox backend."""
    PATTERN: str
    """The files of a folder it reads (a glob, at any depth)."""
    UNIT: str
    """What one episode is in its files (`file`, `sample`), for messages."""

    def check_readable(self) -> None:
        """Raise InputError, in one line, when what reading needs (an optional package) is missing."""
        ...

    def read(self, path: Path) -> ForeignFile:
        """The file's episodes, each keyed by the (domain, task id) it names and its epoch; a file that is not
        of this format, or malformed, raises InputError. A plain function of a path: it may run in a worker."""
        ...

    def export(self, runs: list[Path], out: Path, console: Console) -> int:
        """The runs' finished episodes as files of this format in OUT."""
        ...


FORMATS = {
    "mini-swe-agent": "harness.interop.mini_swe_agent_runs",
    "inspect": "harness.interop.inspect_runs",
    "harbor": "harness.interop.harbor_runs",
}
"""The command line's format name -> its module (imported only when chosen: inspect_ai is an optional extra)."""


def trajectory_format(name: str) -> TrajectoryFormat:
    return cast("TrajectoryFormat", importlib.import_module(FORMATS[name]))
