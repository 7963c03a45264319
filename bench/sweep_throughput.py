"""Prints a sweep's wall time against the ideal: three models, each on its own rate-limited provider.

Run: python bench/sweep_throughput.py [EPISODES] [SECONDS_PER_CALL] [CAPS]   (default 200 0.25 4,8,16)
Three local OpenAI-compatible servers (tests/helpers/openai_server.py, real HTTP through litellm) answer at most CAP
requests at once (a 429 with Retry-After: 1 above it) and wait SECONDS_PER_CALL per answer; one sweep of three
models (one per server) runs EPISODES episodes each (two calls: read a document, answer) in the local sandbox,
every model with --workers and --max-connections of twice the largest cap, so each provider's adaptive limit
must find its cap. Ideal: each provider at its cap the whole time, so the sweep takes as long as its slowest
provider's calls x SECONDS_PER_CALL / CAP. Prints per provider the 429s, the requests it answered at once on
average and its final limit, then the wall time and the fraction of the ideal.
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import yaml

os.environ.setdefault("OPENAI_API_KEY", "sk-bench")  # the local servers take any key

from rich.console import Console

from harness.inputs.config_sources import build_config
from harness.run.sweep import execute_sweep, plan_sweep
from tests.helpers.openai_server import ScriptedOpenAIServer, two_step_agent

CALLS_PER_EPISODE = 2


def project(root: Path, episodes: int) -> None:
    (root / "collections" / "mini").mkdir(parents=True)
    (root / "collections" / "mini" / "ledger.md").write_text("| year | units |\n|---|---|\n| 2020 | 40 |\n")
    (root / "tasks").mkdir()
    rows = [{"id": f"t{i}", "domain": "mini", "question": "Q?", "answer": "42"} for i in range(episodes)]
    (root / "tasks" / "mini.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))


def main(episodes: int, wait_s: float, caps: list[int]) -> None:
    root = Path(tempfile.mkdtemp(prefix="harness-bench-sweep-"))
    project(root, episodes)
    servers = []
    for cap in caps:
        server = ScriptedOpenAIServer()
        server.respond, server.reply_delay_s, server.concurrency_limit = two_step_agent, wait_s, cap
        server.start()
        servers.append(server)
    entries = [
        {"model": f"openai/model-{cap}", "api_base": server.url} for cap, server in zip(caps, servers, strict=True)
    ]
    (root / "sweep.yaml").write_text(yaml.safe_dump(entries))
    width = 2 * max(caps)
    config = build_config(
        {},
        {
            "sweep": root / "sweep.yaml",
            "domain": "mini",
            "tasks_dir": root / "tasks",
            "collections_dir": root / "collections",
            "results_dir": root / "results",
            "run_id": "bench",
            "workers": width,
            "max_connections": width,
            "max_retries": 50,
        },
    )
    folder, plans = plan_sweep(config)
    output = io.StringIO()
    started = time.perf_counter()
    outcome = execute_sweep(folder, plans, None, Console(file=output, width=200))
    wall = time.perf_counter() - started
    for server in servers:
        server.stop()
    assert not outcome.stopped and not outcome.interrupted, outcome
    limits = dict(re.findall(r"provider openai@(\S+) limit (\d+)", output.getvalue()))
    ideal = max(episodes * CALLS_PER_EPISODE * wait_s / cap for cap in caps)
    print(f"{len(caps)} models x {episodes} episodes, {wait_s} s per call, --workers/--max-connections {width}")
    for cap, server in zip(caps, servers, strict=True):
        answered = len(server.requests)
        print(
            f"  cap {cap:>3}: {server.refused} 429s ({server.refused / (answered + server.refused):.1%} of "
            f"{answered + server.refused} requests), {server.mean_answering():.1f} answered at once on average, "
            f"final limit {limits.get(server.url)}"
        )
    print(f"wall {wall:.1f} s, ideal {ideal:.1f} s (slowest provider at its cap): {ideal / wall:.0%} of ideal")


if __name__ == "__main__":
    arguments = sys.argv[1:]
    main(
        int(arguments[0]) if arguments else 200,
        float(arguments[1]) if len(arguments) > 1 else 0.25,
        [int(cap) for cap in arguments[2].split(",")] if len(arguments) > 2 else [4, 8, 16],
    )
