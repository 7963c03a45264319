"""Prints the time and size of `export inspect` and `import inspect` for a run of many scripted episodes.

Run: python bench/inspect_log.py [TASKS]
The run (TASKS episodes of five commands each, on the local sandbox) is made first and not timed; then the
export (one .eval log), inspect's own `read_eval_log` of it, and the import back into a run folder
(graded, evidence recorded) are each timed, with the log's size per episode.
"""

from __future__ import annotations

import io
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console

sys.path.insert(0, str(Path(__file__).parent))
from batch_throughput import project

from harness.inputs.config_sources import build_config
from harness.interop import inspect_runs
from harness.interop.run_import import ImportOptions, import_files
from harness.run.planning.plan import plan_run
from harness.run.runner import execute_run

SCRIPT = [
    {"bash": "ls documents"},
    {"bash": "rg -c 2020 documents"},
    {"bash": "wc -l documents/*"},
    {"bash": "head -50 documents/doc-1.md"},
    {"bash": "grep -h 2020 documents/* | sort | uniq -c"},
    "<answer>42</answer>",
]


def timed(step: str, episodes: int, action) -> None:
    started = time.perf_counter()
    action()
    seconds = time.perf_counter() - started
    print(f"{step:<28} {seconds:7.2f} s  {1000 * seconds / episodes:6.1f} ms/episode")


def main(tasks: int) -> None:
    from inspect_ai.log import read_eval_log

    quiet = Console(file=io.StringIO())
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        project(root, tasks, SCRIPT)
        config = build_config(
            {},
            {
                "model": f"scripted:{root / 'script.yaml'}",
                "domain": "bench",
                "workers": 2,
                "tasks_dir": root / "tasks",
                "collections_dir": root / "collections",
                "results_dir": root / "results",
                "run_id": "bench",
            },
        )
        execute_run(plan_run(config), quiet)
        out = root / "inspect"
        timed("export inspect", tasks, lambda: inspect_runs.export([root / "results" / "bench"], out, quiet))
        log = out / "bench.eval"
        size = log.stat().st_size
        print(f"{'log size':<28} {size / 1e6:7.2f} MB  {size / tasks / 1e3:6.1f} kB/episode")
        timed("inspect read_eval_log", tasks, lambda: read_eval_log(str(log)))
        options = ImportOptions([log], root / "tasks", root / "collections", root / "results", "back")
        timed("import inspect", tasks, lambda: import_files(inspect_runs, options, quiet))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
