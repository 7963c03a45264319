"""Plug-ins named by import path, `package.module:Class` (mini-swe-agent's way of naming an environment): the class
loaded and checked, and every way that fails one line for the user (`InputError`), a missing package naming
what to install."""

from __future__ import annotations

import importlib
import re
import sys

from harness.core.errors import InputError

__all__ = ["is_import_path", "load_class"]

_PATH = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")


def is_import_path(spec: str) -> bool:
    """SPEC names a class by its import path (`package.module:Class`), not a registry name."""
    return _PATH.fullmatch(spec) is not None


def load_class(spec: str, base: type, where: str) -> type:
    """The class at SPEC (`package.module:Class`), a subclass of BASE; WHERE (a flag, a file's field) starts the
    line that says why not. The working folder is importable, as `python -m` makes it, so a module beside the
    user's data is found."""
    if not is_import_path(spec):
        raise InputError(f"{where} {spec}: expected a name or an import path 'package.module:Class'")
    module_name, _, attribute = spec.partition(":")
    if "" not in sys.path:
        sys.path.insert(0, "")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        missing = error.name or module_name
        if module_name == missing or module_name.startswith(missing + "."):
            raise InputError(
                f"{where} {spec}: no module '{missing}' (install the package that provides it, or run from the "
                "folder that holds it)"
            ) from None
        raise InputError(f"{where} {spec}: its module needs '{missing}', which is not installed") from None
    found = getattr(module, attribute, None)
    if found is None:
        raise InputError(f"{where} {spec}: module '{module_name}' has no '{attribute}'")
    if not (isinstance(found, type) and issubclass(found, base)):
        raise InputError(f"{where} {spec}: not a {base.__name__} (subclass {base.__module__}.{base.__name__})")
    return found
