"""`python -m tests.helpers.fake_e2b_runner SERVICE COLLECTION HOST -- ARGS...`: `python -m harness ARGS` in a
process of its own, with tests/helpers/fake_e2b.py as `e2b` (`install`). tests/helpers/fake_e2b_site/ installs it
the same way in every process of a Ray node."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from types import ModuleType


def install(service: Path, collection: Path, host: str) -> ModuleType:
    """The fake SDK as this process's `e2b`: its sandboxes on the service file SERVICE (`SharedSandboxes`, which
    outlives the process as E2B outlives a killed runner), the mini template built from COLLECTION, and its
    sandboxes owned by a runner on HOST (another machine)."""
    import tests.helpers.fake_e2b as fake_e2b

    fake_e2b.RECORD = fake_e2b.Recorder(storage=Path(tempfile.mkdtemp()), shared=fake_e2b.SharedSandboxes(service))
    import harness.sandboxes.e2b.sandbox as e2b_sandbox
    from harness.sandboxes.e2b.templates import TemplateResources, build_template

    e2b_sandbox.owner_label = lambda: f"{host}:4242"  # type: ignore[assignment]
    build_template(fake_e2b, "mini", collection, TemplateResources(2, 4096), lambda _: None)
    sys.modules["e2b"] = fake_e2b
    return fake_e2b


def main(argv: list[str]) -> int:
    service, collection, host, separator, *arguments = argv
    assert separator == "--", argv
    install(Path(service), Path(collection), host)
    from harness.cli.main import main as harness_main

    return harness_main(arguments)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
