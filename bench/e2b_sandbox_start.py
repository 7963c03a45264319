"""Prints how long an E2B sandbox takes to start on the emulator, and what the start's setuid work costs:
the walk of the whole root filesystem it used to do (before issue 24) against the check of known programs
it does now (the recipe strips the bits at build).

Run: python bench/e2b_sandbox_start.py [STARTS]   (from the repository root; needs Docker and the
debootstrap base image, as the emulator's tests do)
The emulator's disk is local and warm, so the walk costs it little; on E2B the disk is fetched lazily and
the walk reads the metadata of every file (the count printed), which the episode never needs.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import tests.helpers.e2b_emulator as emulator
from harness.sandboxes.base import SandboxSettings
from harness.sandboxes.e2b.sandbox import SETUID_PROGRAMS, E2BSandbox
from harness.sandboxes.e2b.templates import TemplateResources, build_template

OLD_WALK = "find / -xdev \\( -type f -perm /6000 -print \\) -o \\( ! -type l -perm -0002 -print \\) > /dev/null"
CHECK = f'for p in {" ".join(SETUID_PROGRAMS)}; do if [ -u "$p" ] || [ -g "$p" ]; then exit 3; fi; done'


def timed(box: E2BSandbox, script: str) -> float:
    started = time.perf_counter()
    box._sandbox.commands.run(script, user="root", timeout=120)
    return time.perf_counter() - started


def main(starts: int) -> None:
    os.environ.setdefault("E2B_API_KEY", "emulator-key")
    settings = SandboxSettings()
    with tempfile.TemporaryDirectory() as folder:
        collection = Path(folder) / "bench"
        collection.mkdir()
        for index in range(50):
            (collection / f"doc-{index}.md").write_text(f"| year | value |\n| 2020 | {index} |\n" * 100)
        resources = TemplateResources.from_limits(settings.limits)
        reference = build_template(emulator, "bench", collection, resources, lambda line: None)
        totals, walks, checks = [], [], []
        for index in range(starts):
            box = E2BSandbox(emulator, reference, "emulator-key", "bench", f"start-{index}", settings, 600)
            started = time.perf_counter()
            box.start()
            totals.append(time.perf_counter() - started)
            walks.append(timed(box, OLD_WALK))
            checks.append(timed(box, CHECK))
            files = box._sandbox.commands.run("find / -xdev | wc -l", user="root", timeout=120).stdout.strip()
            box.close()
    print(f"sandbox start (create + get_info + lock-down), median of {starts}: {statistics.median(totals):.2f} s")
    print(f"  the walk of / a start used to do: {statistics.median(walks) * 1000:.0f} ms ({files} files)")
    print(f"  the check of {len(SETUID_PROGRAMS)} programs it does now: {statistics.median(checks) * 1000:.0f} ms")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
