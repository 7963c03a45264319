"""On the Ray nodes of tests/run/test_ray_e2b.py, whose PYTHONPATH starts with this folder: a process's first
`import e2b` gets tests/helpers/fake_e2b.py (`tests.helpers.fake_e2b_runner.install`) on the service file
FAKE_E2B_SERVICE, with the mini template from FAKE_E2B_COLLECTION, its sandboxes owned by FAKE_E2B_HOST.
Processes that never import e2b (Ray's own) pay nothing."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any


class _FakeE2B(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Stays first on the path for every later `import e2b`: a finder that removed itself once found would
    leave a second import (after `importlib.util.find_spec`, which loads nothing) to the real SDK."""

    def __init__(self) -> None:
        self.module: ModuleType | None = None
        self._installing = False

    def find_spec(self, name: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if name != "e2b" or self._installing:
            return None
        if self.module is None:  # a bare `find_spec("e2b")` (the runner's check for the extra) asks first
            self._installing = True  # the fake itself imports the real SDK
            try:
                from tests.helpers.fake_e2b_runner import install

                environ = os.environ
                self.module = install(
                    Path(environ["FAKE_E2B_SERVICE"]), Path(environ["FAKE_E2B_COLLECTION"]), environ["FAKE_E2B_HOST"]
                )
            finally:
                self._installing = False
            # the import system would load whatever module sys.modules now holds as `e2b` again, from its own spec
            del sys.modules[name]
        return importlib.machinery.ModuleSpec(name, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.module

    def exec_module(self, module: ModuleType) -> None:
        pass


if os.environ.get("FAKE_E2B_SERVICE"):
    sys.meta_path.insert(0, _FakeE2B())
