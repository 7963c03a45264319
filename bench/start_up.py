"""What happens before the first episode at the published benchmark's size, cold and warm.

Run: python bench/start_up.py [SCALE]   (default 1.0: 8 domains, 9,664 Markdown files, 1.57 GB, 362 tasks)
Builds the benchmark's shape in a temporary folder (one domain of 1,200 files and 475 MB, seven sharing
the rest; Markdown tables with numbers written as real documents write them), then times `plan_run`
(task loading, collection hashes, the leakage check, the sandbox and tool check) for:
- the first start of `--domain all` with an empty cache, and again in a new results folder (warm);
- one shard of four with an empty cache, then the other shards in new results folders (warm);
- a resume of a finished run's folder (warm).
Goal on the 2-core machine: a first start within 15 s, every later one within 2 s.
"""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness.inputs.config_sources import build_config
from harness.run.planning.plan import plan_run

DOMAINS = ("agri", "arch", "biz", "edu", "fin", "health", "law", "tech")
LARGEST = ("law", 1200, 475_000_000)
"""The largest domain: its files and bytes."""
REST = (9664 - 1200, 1_570_000_000 - 475_000_000)
TASKS = 362


def _row_pool(rng: random.Random) -> list[str]:
    rows = []
    for _ in range(20_000):
        value = f"{rng.randint(0, 99999):,}.{rng.randint(0, 9)}"
        rows.append(f"| {rng.randint(1990, 2024)} | R{rng.randint(1, 99)} | {value} | {rng.uniform(-20, 20):.2f} % |")
    return rows


def _document(rng: random.Random, pool: list[str], size: int) -> str:
    start = rng.randrange(len(pool))
    lines, total = ["| year | region | value | change |", "|---|---|---|---|"], 0
    while total < size:
        row = pool[(start + len(lines)) % len(pool)]
        lines.append(row)
        total += len(row) + 1
    return "\n".join(lines) + "\n"


def build(root: Path, scale: float) -> None:
    rng = random.Random(7)
    pool = _row_pool(rng)
    others = [domain for domain in DOMAINS if domain != LARGEST[0]]
    plan = {LARGEST[0]: (int(LARGEST[1] * scale), LARGEST[2] * scale)}
    for number, domain in enumerate(others):
        files = int(REST[0] * scale) // len(others) + (number < int(REST[0] * scale) % len(others))
        plan[domain] = (files, REST[1] * scale / len(others))
    (root / "tasks").mkdir()
    for index, domain in enumerate(DOMAINS):
        files, size = plan[domain]
        folder = root / "collections" / domain
        folder.mkdir(parents=True)
        for number in range(files):
            (folder / f"report-{number:05d}.md").write_text(_document(rng, pool, int(size / files)))
        count = TASKS // len(DOMAINS) + (index < TASKS % len(DOMAINS))
        lines = [
            {
                "id": f"{domain}-{i:03d}",
                "domain": domain,
                "question": "How much?",
                "answer": f"{rng.uniform(-1000, 100000):,.2f}",
            }
            for i in range(count)
        ]
        (root / "tasks" / f"{domain}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (root / "script.yaml").write_text("- <answer>0</answer>\n")


def timed_start(root: Path, cache: Path, results: str, run_id: str, **settings: Any) -> float:
    config = build_config(
        {},
        {
            "model": f"scripted:{root / 'script.yaml'}",
            "domain": "all",
            "tasks_dir": root / "tasks",
            "collections_dir": root / "collections",
            "results_dir": root / results,
            "run_id": run_id,
            "cache_dir": cache,
            **settings,
        },
    )
    started = time.perf_counter()
    plan = plan_run(config)
    elapsed = time.perf_counter() - started
    plan.lock.release()
    return elapsed


def finished_run(root: Path, cache: Path) -> None:
    """A run folder with its run.yaml, for the resume: one episode of it run for real."""
    from harness.cli.main import main

    code = main(
        [
            "--model",
            f"scripted:{root / 'script.yaml'}",
            "--domain",
            "all",
            "--task-id",
            "law-000",
            "--tasks-dir",
            str(root / "tasks"),
            "--collections-dir",
            str(root / "collections"),
            "--results-dir",
            str(root / "resumed"),
            "--run-id",
            "run",
            "--cache-dir",
            str(cache),
        ]
    )
    assert code == 0


def main(scale: float) -> None:
    with tempfile.TemporaryDirectory(prefix="harness-start-up-") as folder:
        root = Path(folder)
        started = time.perf_counter()
        build(root, scale)
        files = sum(1 for _ in (root / "collections").rglob("*.md"))
        size = sum(path.stat().st_size for path in (root / "collections").rglob("*.md"))
        print(f"built {files} files, {size / 1e9:.2f} GB, {TASKS} tasks in {time.perf_counter() - started:.0f} s")
        print("| start | cache | plan_run |\n|---|---|---|")
        whole = root / "cache-all"
        print(f"| --domain all, first | cold | {timed_start(root, whole, 'r1', 'a'):.1f} s |")
        print(f"| --domain all, new results folder | warm | {timed_start(root, whole, 'r2', 'a'):.2f} s |")
        sharded = root / "cache-shards"
        print(f"| --shard 1/4, first | cold | {timed_start(root, sharded, 's1', 'a', shard='1/4'):.1f} s |")
        for part in (2, 3, 4):
            seconds = timed_start(root, sharded, f"s{part}", "a", shard=f"{part}/4")
            print(f"| --shard {part}/4, new results folder | cold for its tasks | {seconds:.1f} s |")
        again = timed_start(root, sharded, "s5", "a", shard="1/4")
        print(f"| --shard 1/4 again, new results folder | warm | {again:.2f} s |")
        finished_run(root, whole)
        print(f"| resume of a run folder (--domain all) | warm | {timed_start(root, whole, 'resumed', 'run'):.2f} s |")


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
