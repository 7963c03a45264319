"""Runner memory and CPU with many concurrent episodes, and the fraction of ideal speed-up.

Run: python bench/concurrency.py [WORKERS ...]   (default: 50 200)
Each episode runs three commands on the local sandbox and answers, with a model that waits DELAY_S per
call (a scripted model behind a sleep), so a batch is bound by waiting, not by the machine: N workers
should finish N times faster than one. Each configuration runs in a fresh process (peak memory is per
process); the ideal is `episodes x (one episode alone) / min(workers, episodes)`.
"""

from __future__ import annotations

import io
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rich.console import Console

sys.path.insert(0, str(Path(__file__).parent))
from batch_throughput import SCRIPT, project

from harness.inputs.config_sources import build_config
from harness.run.planning.plan import plan_run
from harness.run.runner import execute_run

DELAY_S = 1.0


@dataclass
class SlowModel:
    """Waits DELAY_S, then answers as the scripted model would."""

    inner: Any

    def query(self, messages: list[dict[str, Any]], timeout_s: float) -> Any:
        time.sleep(DELAY_S)
        return self.inner.query(messages, timeout_s)

    def __getattr__(self, name: str) -> Any:  # context_window, count_tokens, ...
        return getattr(self.inner, name)


@dataclass
class SlowFactory:
    inner: Any

    @property
    def settings(self) -> Any:
        return self.inner.settings

    def __call__(self, task: Any) -> SlowModel:
        return SlowModel(self.inner(task))


def one(workers: int, episodes: int) -> dict[str, float]:
    """Run `episodes` with `workers` in this process; wall seconds, runner CPU seconds, peak MB."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        project(root, episodes)
        config = build_config(
            {},
            {
                "model": f"scripted:{root / 'script.yaml'}",
                "domain": "bench",
                "tasks_dir": root / "tasks",
                "collections_dir": root / "collections",
                "results_dir": root / "results",
                "run_id": "c",
                "workers": workers,
            },
        )
        plan = plan_run(config)
        plan = replace(plan, make_model=SlowFactory(plan.make_model))
        started = time.perf_counter()
        execute_run(plan, Console(file=io.StringIO()))
        wall = time.perf_counter() - started
        rows = [json.loads(line) for line in (root / "results" / "c" / "results.jsonl").read_text().splitlines()]
        failed = [row for row in rows if row["status"] != "answered"]
        assert not failed and len(rows) == episodes, f"{len(failed)} of {episodes} failed, e.g. {failed[:1]}"
    # the runner process only: sandbox processes are reaped inside their holders, out of RUSAGE_CHILDREN's view
    own = resource.getrusage(resource.RUSAGE_SELF)
    return {"wall_s": wall, "runner_cpu_s": own.ru_utime + own.ru_stime, "peak_mb": own.ru_maxrss / 1024}


def measure(workers: int, episodes: int) -> dict[str, float]:
    command = [sys.executable, __file__, "--one", str(workers), str(episodes)]
    return json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)


def main(worker_counts: list[int]) -> None:
    alone = statistics.median(measure(1, 1)["wall_s"] for _ in range(3))
    calls = len(SCRIPT)
    print(f"one episode alone: {alone:.2f} s ({calls} model calls of {DELAY_S:.0f} s, {calls - 1} commands)")
    print("| workers | episodes | wall | ideal | of ideal speed-up | runner CPU | runner peak RSS |")
    print("|---|---|---|---|---|---|---|")
    for workers in worker_counts:
        episodes = 2 * workers
        figures = measure(workers, episodes)
        ideal = episodes * alone / workers
        print(
            f"| {workers} | {episodes} | {figures['wall_s']:.1f} s | {ideal:.1f} s | "
            f"{ideal / figures['wall_s']:.0%} | {figures['runner_cpu_s']:.1f} s | "
            f"{figures['peak_mb']:.0f} MB |"
        )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        print(json.dumps(one(int(sys.argv[2]), int(sys.argv[3]))))
    else:
        main([int(argument) for argument in sys.argv[1:]] or [50, 200])
