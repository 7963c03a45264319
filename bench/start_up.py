"""How long a run takes to start on a domain of realistic size (the largest starter-benchmark domain, law,
is 117M tokens, about 470 MB of Markdown), and where that time goes.

Run: python bench/start_up.py [MEGABYTES] [TASKS]   (default 470 MB, 45 tasks)
Builds a synthetic domain of Markdown tables in a temporary folder (numbers written the way real
documents write them: 1,234.5, -3.25, 42 %), then times `plan_run` (task loading, the collection hash,
the leakage check, the sandbox check) twice, the second reading the first's leakage scan from the cache,
and, separately, the collection hash and the leakage check alone.
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from harness.inputs.collections.hashing import collection_hash
from harness.inputs.config import build_config
from harness.inputs.leakage import find_leaks
from harness.inputs.tasks import load_task_file
from harness.run.runner import plan_run

T = TypeVar("T")
DOCUMENT_BYTES = 400_000
"""About the size of a converted 40-page report."""


def build(root: Path, megabytes: int, tasks: int) -> None:
    rng = random.Random(7)
    documents = root / "collections" / "big"
    documents.mkdir(parents=True)
    for index in range(megabytes * 1_000_000 // DOCUMENT_BYTES):
        rows, size = ["| year | region | value | change |", "|---|---|---|---|"], 0
        while size < DOCUMENT_BYTES:
            value = f"{rng.randint(0, 99999):,}.{rng.randint(0, 9)}"
            row = f"| {rng.randint(1990, 2024)} | R{rng.randint(1, 99)} | {value} | {rng.uniform(-20, 20):.2f} % |"
            rows.append(row)
            size += len(row) + 1
        (documents / f"report-{index:05d}.md").write_text("\n".join(rows) + "\n")
    golds = [f"{rng.uniform(-1000, 100000):,.2f}" for _ in range(tasks)]
    lines = [{"id": f"big-{i:03d}", "domain": "big", "question": "How much?", "answer": gold}
             for i, gold in enumerate(golds)]  # fmt: skip
    (root / "tasks").mkdir()
    (root / "tasks" / "big.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (root / "script.yaml").write_text("- <answer>0</answer>\n")


def timed(label: str, action: Callable[[], T]) -> T:
    started = time.perf_counter()
    result = action()
    print(f"{label}: {time.perf_counter() - started:.1f} s")
    return result


def main(megabytes: int, tasks: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        timed(f"building {megabytes} MB, {tasks} tasks", lambda: build(root, megabytes, tasks))
        documents = root / "collections" / "big"
        timed("collection hash", lambda: collection_hash(documents))
        loaded = load_task_file(root / "tasks" / "big.jsonl")
        hits = timed("leakage check", lambda: find_leaks(loaded, {"big": documents}))
        print(f"  {len(hits)} hits")
        for attempt in ("first run", "next run on the same collection and tasks (leakage scan cached)"):
            config = build_config({}, {
                "model": f"scripted:{root / 'script.yaml'}", "domain": "big", "tasks_dir": root / "tasks",
                "collections_dir": root / "collections", "results_dir": root / "results", "run_id": attempt[:4],
            })  # fmt: skip
            plan = timed(f"plan_run, {attempt}", lambda: plan_run(config))  # noqa: B023 - called at once
            plan.lock.release()


if __name__ == "__main__":
    arguments = [int(value) for value in sys.argv[1:]]
    main(*(arguments + [470, 45][len(arguments) :]))
