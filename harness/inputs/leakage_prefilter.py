"""Which documents can print any task's needle at all: ripgrep with a pattern file, before the exact scan.

`rg -F -l` reads a collection at disk speed on every core and lists the files holding any of the patterns.
The patterns are every non-blank line of every needle: a file that prints a needle holds each of its
lines, so the list is a superset of the files the exact scan (leakage.Needles, with its whole-word rule)
can find anything in, and only those are read again. Without ripgrep, every document is scanned.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from harness.inputs.tasks import Task


def files_printing_any(root: Path, tasks: list[Task]) -> set[str] | None:
    """Relative paths of ROOT's files that hold a line of some needle; None when ripgrep cannot say."""
    rg = shutil.which("rg")
    needles = [needle for task in tasks for needle in (task.answer, task.solution, task.id) if needle]
    lines = {line for needle in needles for line in needle.strip().splitlines() if line}
    if rg is None or any(not needle.strip() for needle in needles):
        return None  # a blank needle is "printed" in (nearly) every text: every file counts
    if not lines:
        return set()
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".patterns") as patterns:
        patterns.write("\n".join(sorted(lines)) + "\n")
        patterns.flush()
        # -uuu -a: no ignore files, hidden files and binary ones too; -L: as the scan, through links;
        # --encoding none: raw bytes, never transcoded (the scan reads UTF-8 whatever a BOM says).
        command = [
            rg,
            "--files-with-matches",
            "--null",
            "--fixed-strings",
            "-uuu",
            "--text",
            "--follow",
            "--no-messages",
            "--encoding",
            "none",
            "--no-config",
            "--file",
            patterns.name,
            ".",
        ]
        done = subprocess.run(command, cwd=root, capture_output=True, env={"PATH": os.environ.get("PATH", "")})
    if done.returncode not in (0, 1):
        return None
    return {os.path.normpath(name.decode("utf-8", "surrogateescape")) for name in done.stdout.split(b"\0") if name}
