"""The host's processes as a test looks for leftovers: pgrep sees every process on the machine, another run's too."""

from __future__ import annotations

import random
import subprocess


def host_processes(pattern: str) -> list[str]:
    """Pids on the host whose command line matches (pgrep excludes itself; no shell in between)."""
    return subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.split()


def unique_sleep(seconds: int) -> str:
    """`sleep` for about SECONDS with a command line no other test, nor another run of the suite, has."""
    return f"sleep {seconds}.{random.randrange(10**9):09d}"
