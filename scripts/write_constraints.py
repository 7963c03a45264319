"""Writes constraints.txt, the lock a reproducible evaluation installs from, from the environment that runs it.

    python scripts/write_constraints.py        # in the virtual environment the tests passed in

Every distribution installed there but the harness itself, `name==version`, sorted (pip's own freeze). Refused,
nothing written, when the environment does not hold a version pyproject.toml pins exactly: the lock and the
pins must agree (tests/run/test_pinned_packages.py checks they do).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parent.parent
CONSTRAINTS = REPO / "constraints.txt"
HEADER = """\
# The lock of a reproducible evaluation: every package of the environment the test suite passed in.
#     pip install -c constraints.txt -e '.[test]'     (or '.', '.[ray]', ... : a constraint only pins what is installed)
# Made by `python scripts/write_constraints.py`; its pins agree with pyproject.toml's exact ones.
"""


def exact_pins(requirements: list[str]) -> dict[str, str]:
    """The requirements pinned with `==`, canonical name -> version."""
    pins: dict[str, str] = {}
    for text in requirements:
        requirement = Requirement(text)
        for spec in requirement.specifier:
            if spec.operator == "==":
                pins[canonicalize_name(requirement.name)] = spec.version
    return pins


def locked_versions(constraints: str) -> dict[str, str]:
    """constraints.txt's `name==version` lines, canonical name -> version."""
    locked: dict[str, str] = {}
    for line in constraints.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            locked[canonicalize_name(name)] = version.strip()
    return locked


def disagreements(pyproject: str, constraints: str) -> list[str]:
    """One line per exact pin of pyproject.toml that the constraints lock at another version, or lack while it is
    the runtime's (an optional extra's package, e.g. `domains-build`'s, may be absent from the locked
    environment)."""
    project = tomllib.loads(pyproject)["project"]
    runtime = exact_pins(project["dependencies"])
    optional = exact_pins([text for group in project.get("optional-dependencies", {}).values() for text in group])
    locked = locked_versions(constraints)
    problems = [
        f"{name}: pyproject.toml pins {version}, constraints.txt has {locked.get(name, 'nothing')}"
        for name, version in sorted(runtime.items())
        if locked.get(name) != version
    ]
    problems += [
        f"{name}: pyproject.toml pins {version} (optional), constraints.txt has {locked[name]}"
        for name, version in sorted(optional.items())
        if name in locked and locked[name] != version
    ]
    return problems


def main() -> int:
    frozen = subprocess.run(
        [sys.executable, "-m", "pip", "freeze", "--exclude-editable"], capture_output=True, text=True, check=True
    ).stdout
    lines = sorted(
        (line for line in frozen.splitlines() if "==" in line and not line.lower().startswith("harness==")),
        key=str.lower,
    )
    text = HEADER + "".join(line + "\n" for line in lines)
    problems = disagreements((REPO / "pyproject.toml").read_text(), text)
    if problems:
        print(f"constraints.txt not written: this environment breaks pyproject.toml's pins: {problems[0]}")
        return 2
    CONSTRAINTS.write_text(text)
    print(f"{CONSTRAINTS}: {len(lines)} packages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
