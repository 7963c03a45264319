"""Executors by name (`--executor`): each is one line, its function's import path, imported when a run uses it
(so Ray is loaded by the runs that choose it)."""

from __future__ import annotations

import importlib

from harness.core.errors import InputError
from harness.run.executors.batch import Executor

_EXECUTORS: dict[str, str] = {
    "local": "harness.run.executors.threads:run_batch",
    "ray": "harness.run.executors.ray:run_batch_on_ray",
}
"""Name -> `module:function` of an `Executor`."""


def executor_of(name: str) -> Executor:
    path = _EXECUTORS.get(name)
    if path is None:
        raise InputError(f"--executor {name}: no such executor (one of {', '.join(_EXECUTORS)})")
    module, _, function = path.partition(":")
    executor: Executor = getattr(importlib.import_module(module), function)
    return executor
