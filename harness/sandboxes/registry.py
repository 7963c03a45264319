"""Sandbox backends by name: each is one line, its class's import path, imported only when a command uses it
(so Docker's or E2B's SDK is loaded by the runs that choose them); any other backend is named by its own import
path (`--sandbox package.module:Class`), with no edit here. Nothing outside harness.sandboxes imports a
backend's own package (import-linter contract 7): every command reaches it through these functions."""

from __future__ import annotations

import importlib
import re

from harness.core.errors import InputError
from harness.core.extras import require_extra
from harness.core.plugins import is_import_path, load_class
from harness.sandboxes.backend import BackendSetup, SandboxBackend
from harness.sandboxes.closed_book import ClosedBookBackend

_BACKENDS: dict[str, str] = {
    "local": "harness.sandboxes.local.backend:LocalBackend",
    "docker": "harness.sandboxes.docker.backend:DockerBackend",
    "e2b": "harness.sandboxes.e2b.backend:E2BBackend",
}
"""Name -> `module:Class` of a `SandboxBackend` subclass."""
_EXTRAS = {"e2b": "e2b"}
"""Name -> the extra of the install its SDK comes in (harness.core.extras)."""
_NAME = re.compile(r"[a-z][a-z0-9_-]*")


def register_backend(name: str, path: str) -> None:
    """Make backend NAME (`--sandbox NAME`) the class at PATH, `package.module:Class`."""
    module, _, attribute = path.partition(":")
    if not _NAME.fullmatch(name) or not module or not attribute.isidentifier():
        raise ValueError(f"sandbox backend {name!r} -> {path!r}: expected a lowercase name and 'package.module:Class'")
    _BACKENDS[name] = path


def backend_names() -> tuple[str, ...]:
    """Every backend a run can choose, in the order they were registered."""
    return tuple(_BACKENDS)


def backend_class(name: str, where: str = "--sandbox") -> type[SandboxBackend]:
    """The backend class NAME; an unknown name is one line naming the known ones (WHERE: the flag or command)."""
    path = _BACKENDS.get(name)
    if path is None and is_import_path(name):  # an out-of-tree backend, named by its import path
        found: type[SandboxBackend] = load_class(name, SandboxBackend, where)
        return found
    if path is None:
        raise InputError(
            f"{where} {name}: no such sandbox backend (one of {', '.join(_BACKENDS)}, or 'package.module:Class')"
        )
    if name in _EXTRAS:
        require_extra(_EXTRAS[name], f"{where} {name}")
    module, _, attribute = path.partition(":")
    backend = getattr(importlib.import_module(module), attribute)
    if not (isinstance(backend, type) and issubclass(backend, SandboxBackend)):
        raise TypeError(f"sandbox backend {name}: {path} is not a SandboxBackend")
    return backend


def prepare_backend(name: str, setup: BackendSetup) -> SandboxBackend:
    """Backend NAME checked for a run (`SandboxBackend.check`: nothing started, nothing removed), with
    `--closed-book` applied."""
    backend_type = backend_class(name)
    backend = backend_type.check(setup)
    if setup.closed_book and not backend_type.closed_book_builtin:
        return ClosedBookBackend(backend)
    return backend
