"""Prints per-command sandbox overhead and grading throughput. Run: python bench/sandbox_and_grading.py"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from harness.grading.numeric import grade_submission, parse_gold
from harness.sandboxes.base import SandboxSettings
from harness.sandboxes.local.sandbox import BubblewrapSandbox, find_bwrap


def sandbox_overhead(commands: int = 50) -> None:
    with tempfile.TemporaryDirectory() as collection:
        box = BubblewrapSandbox(Path(collection), "bench", SandboxSettings(), find_bwrap())
        started = time.perf_counter()
        box.start()
        start_s = time.perf_counter() - started
        timings = []
        for _ in range(commands):
            began = time.perf_counter()
            box.execute("true", 30)
            timings.append(time.perf_counter() - began)
        mechanism = box.describe()["limits"]["mechanism"]  # type: ignore[index]
        box.close()
    print(f"sandbox start: {start_s * 1000:.1f} ms (limits: {mechanism})")
    print(f"command `true`: median {statistics.median(timings) * 1000:.1f} ms, max {max(timings) * 1000:.1f} ms")


def grading_throughput(rounds: int = 20000) -> None:
    gold = parse_gold("-18.03 pp", "[sign]x.xx pp")
    submissions = ["<answer>−18.03 pp</answer>", "<answer>approximately -18.030 p.p.</answer>", "no tag", "x" * 5000]
    began = time.perf_counter()
    for index in range(rounds):
        grade_submission(submissions[index % len(submissions)], gold)
    elapsed = time.perf_counter() - began
    print(f"grading: {rounds / elapsed:,.0f} submissions/s")


if __name__ == "__main__":
    sandbox_overhead()
    grading_throughput()
