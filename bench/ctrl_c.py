"""How long Ctrl-C takes to end a run whose model calls a server never answers.

Run: python bench/ctrl_c.py [ROUNDS] [WORKERS]. Each round starts `python -m harness --model openai/x` against
a loopback OpenAI-compatible server that lists its models but never answers a completion
(tests/helpers/silent_server.py), waits until every worker's episode is waiting on its call, sends SIGINT and times
until the rows are written (every episode `cancelled`) and until the process has exited; it also counts the
calls whose connections the server saw closed. Prints the median and the worst of each.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.helpers.silent_server import SilentServer


def one_round(root: Path, workers: int) -> tuple[float, float, int]:
    (root / "tasks").mkdir()
    (root / "collections" / "mini").mkdir(parents=True)
    (root / "collections" / "mini" / "ledger.md").write_text("| year | units |\n|---|---|\n| 2020 | 40 |\n")
    task = {"domain": "mini", "question": "Q?", "answer": "42"}
    tasks = "".join(json.dumps({"id": f"t{i}", **task}) + "\n" for i in range(workers))
    (root / "tasks" / "mini.jsonl").write_text(tasks)
    server = SilentServer()
    server.start()
    folders = ["--tasks-dir", str(root / "tasks"), "--collections-dir", str(root / "collections")]
    command = [sys.executable, "-m", "harness", "--model", "openai/x", "--api-base", server.url, "--domain", "mini"]
    process = subprocess.Popen(
        [*command, *folders, "--results-dir", str(root / "results"), "--run-id", "r", "--workers", str(workers)],
        env={**os.environ, "OPENAI_API_KEY": "sk-bench"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while server.waiting < workers:
            time.sleep(0.02)
        sent = time.monotonic()
        process.send_signal(signal.SIGINT)
        results = root / "results" / "r" / "results.jsonl"
        rows_s = None
        while process.poll() is None:
            if rows_s is None and results.exists() and len(results.read_text().splitlines()) == workers:
                rows_s = time.monotonic() - sent
            time.sleep(0.01)
        exit_s = time.monotonic() - sent
        statuses = {json.loads(line)["status"] for line in results.read_text().splitlines()}
        assert statuses == {"cancelled"}, statuses
        return rows_s if rows_s is not None else exit_s, exit_s, server.closed_by_client
    finally:
        server.stop()


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    workers = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    figures = []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as work:
            figures.append(one_round(Path(work), workers))
    rows = [figure[0] for figure in figures]
    exits = [figure[1] for figure in figures]
    print(f"{rounds} rounds, {workers} episodes waiting on a silent server each")
    print(f"rows written after SIGINT: median {statistics.median(rows):.2f} s, worst {max(rows):.2f} s")
    print(f"process exited after SIGINT: median {statistics.median(exits):.2f} s, worst {max(exits):.2f} s")
    print(f"connections the server saw closed: {[figure[2] for figure in figures]} of {workers} each")


if __name__ == "__main__":
    main()
