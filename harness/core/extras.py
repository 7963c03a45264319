"""The optional parts of the install (pyproject.toml's extras): what each brings, and the one line a command that
needs a missing one prints (the core install runs the demo and any model; these are the heavy rest)."""

from __future__ import annotations

import importlib.util
import sys

from harness.core.errors import InputError

__all__ = ["EXTRAS", "missing_modules", "require_extra"]

EXTRAS: dict[str, tuple[str, ...]] = {
    "convert": ("markitdown", "pymupdf", "pymupdf4llm", "openpyxl", "xlrd", "msoffcrypto", "charset_normalizer"),
    "analysis": ("matplotlib", "numpy", "scipy"),
    "e2b": ("e2b",),
    "agents": ("minisweagent",),
    "retrieval": ("bm25s", "numpy", "scipy"),
    "toolset": ("pandas", "numpy", "scipy", "openpyxl", "lxml", "bs4", "pymupdf", "pdfplumber", "tabulate"),
}
"""Extra -> the modules it installs that harness (or the agent, for `toolset`) imports."""


def missing_modules(extra: str) -> list[str]:
    """The modules of EXTRA this environment cannot import (found without importing them)."""
    return [module for module in EXTRAS[extra] if not _importable(module)]


def _importable(module: str) -> bool:
    if module in sys.modules:  # None there: an import known to fail
        return sys.modules[module] is not None
    return importlib.util.find_spec(module) is not None


def require_extra(extra: str, what: str) -> None:
    """One line naming the install when WHAT (a command, a flag) needs EXTRA and part of it is missing."""
    missing = missing_modules(extra)
    if missing:
        raise InputError(f"{what} needs: pip install 'harness[{extra}]' (missing: {', '.join(missing)})")
