"""A Harbor job's trials as episodes for the import engine (run_import.py): not read yet."""

from __future__ import annotations

from pathlib import Path

from harness.core.errors import InputError
from harness.interop.imported import ForeignFile

FORMAT = "Harbor trial"
PATTERN = "result.json"
UNIT = "trial"


def read(path: Path) -> ForeignFile:
    """Refused in one line: the import of Harbor's trials comes next."""
    raise InputError(f"{path}: import harbor: not read yet")
