"""Prints batch throughput (episodes/s) and peak memory for scripted episodes on the local sandbox.

Run: python bench/batch_throughput.py [TASKS]
Each episode runs three commands and answers, so the figure is the runner's own overhead per episode
(sandbox set-up, logging, grading), not a model's speed. CPU per episode counts this process and the
processes it reaped (bwrap's set-up), not the commands themselves: bwrap exits without reaping the
sandbox's pid 1. Still, on a busy machine it compares versions better than wall time, which there mostly
measures the others.
"""

from __future__ import annotations

import io
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

import yaml
from rich.console import Console

from harness.inputs.config_sources import build_config
from harness.run.planning.plan import plan_run
from harness.run.runner import execute_run

SCRIPT = [
    {"bash": "ls documents"},
    {"bash": "rg -c 2020 documents"},
    {"bash": "wc -l documents/*"},
    "<answer>42</answer>",
]


def project(root: Path, tasks: int, script: list[object] = SCRIPT) -> None:
    """TASKS copies of one task over 20 documents, and the scripted model's replies (SCRIPT by default)."""
    (root / "tasks").mkdir()
    (root / "collections" / "bench").mkdir(parents=True)
    for index in range(20):
        (root / "collections" / "bench" / f"doc-{index}.md").write_text(f"| year | value |\n| 2020 | {index} |\n" * 200)
    rows = [{"id": f"b{i}", "domain": "bench", "question": "Q?", "answer": "42"} for i in range(tasks)]
    (root / "tasks" / "bench.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    (root / "script.yaml").write_text(yaml.safe_dump(script))


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main(tasks: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        project(root, tasks)
        for workers in (1, 2, 4):
            config = build_config(
                {},
                {
                    "model": f"scripted:{root / 'script.yaml'}",
                    "domain": "bench",
                    "tasks_dir": root / "tasks",
                    "collections_dir": root / "collections",
                    "results_dir": root / "results",
                    "run_id": f"w{workers}",
                    "workers": workers,
                },
            )
            plan = plan_run(config)
            started, cpu = time.perf_counter(), _cpu()
            execute_run(plan, Console(file=io.StringIO()))
            elapsed, cpu = time.perf_counter() - started, _cpu() - cpu
            print(
                f"workers {workers}: {tasks} episodes ({len(SCRIPT) - 1} commands each) in {elapsed:.2f} s, "
                f"{tasks / elapsed:.1f} episodes/s, {cpu / tasks * 1000:.0f} ms CPU per episode"
            )
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak runner memory: {peak_mb:.0f} MB")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 40)
