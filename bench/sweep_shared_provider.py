"""Prints how much of a shared provider's allowed concurrency a sweep keeps in use: three models on one server.

Run: python bench/sweep_shared_provider.py [EPISODES] [SECONDS_PER_CALL] [CAP] [WORKERS]   (default 100 0.5 8 16)
One local OpenAI-compatible server (tests/helpers/openai_server.py, real HTTP through litellm) answers at most CAP
requests at once (a 429 with Retry-After: 1 above it) and waits SECONDS_PER_CALL per answer; a sweep of three
models on it runs EPISODES episodes each (two calls: read a document, answer) in the local sandbox, every model
with --workers and --max-connections WORKERS, so the provider's one adaptive limit must find CAP. Prints the
requests the server answered at once on average from its first request to its last answer (the goal: at least
90% of CAP), the 429s, and the wall time against the ideal (every call at the cap). Much shorter calls measure
the machine instead: on two loaded cores an episode's sandbox start (about a second) leaves too few calls waiting
to fill the cap at 0.25 s per call, whatever the limit.
"""

from __future__ import annotations

import io
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import yaml

os.environ.setdefault("OPENAI_API_KEY", "sk-bench")  # the local server takes any key

from rich.console import Console

sys.path.insert(0, str(Path(__file__).parent))
from sweep_throughput import CALLS_PER_EPISODE, project

from harness.inputs.config_sources import build_config
from harness.run.sweep import execute_sweep, plan_sweep
from tests.helpers.openai_server import ScriptedOpenAIServer, two_step_agent

MODELS = 3


def main(episodes: int, wait_s: float, cap: int, workers: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="harness-bench-shared-"))
    project(root, episodes)
    server = ScriptedOpenAIServer()
    server.respond, server.reply_delay_s, server.concurrency_limit = two_step_agent, wait_s, cap
    server.start()
    entries = [{"model": f"openai/model-{n}", "api_base": server.url} for n in range(MODELS)]
    (root / "sweep.yaml").write_text(yaml.safe_dump(entries))
    config = build_config(
        {},
        {
            "sweep": root / "sweep.yaml",
            "domain": "mini",
            "tasks_dir": root / "tasks",
            "collections_dir": root / "collections",
            "results_dir": root / "results",
            "run_id": "bench",
            "workers": workers,
            "max_connections": workers,
            "max_retries": 50,
        },
    )
    folder, plans = plan_sweep(config)
    output = io.StringIO()
    started = time.perf_counter()
    outcome = execute_sweep(folder, plans, None, Console(file=output, width=200))
    wall = time.perf_counter() - started
    server.stop()
    assert not outcome.stopped and not outcome.interrupted, outcome
    [limit] = re.findall(r"provider openai@\S+ limit (\d+)", output.getvalue())[-1:] or ["?"]
    answered = len(server.requests)
    mean = server.mean_answering()
    ideal = MODELS * episodes * CALLS_PER_EPISODE * wait_s / cap
    print(
        f"{MODELS} models x {episodes} episodes on one server allowing {cap} at once, {wait_s} s per call, "
        f"--workers/--max-connections {workers}"
    )
    print(
        f"  mean in flight {mean:.2f} of {cap} ({mean / cap:.0%}); {server.refused} 429s "
        f"({server.refused / (answered + server.refused):.1%} of {answered + server.refused} requests); "
        f"final limit {limit}"
    )
    print(f"wall {wall:.1f} s, ideal {ideal:.1f} s: {ideal / wall:.0%} of ideal")


if __name__ == "__main__":
    arguments = sys.argv[1:]
    main(
        int(arguments[0]) if arguments else 100,
        float(arguments[1]) if len(arguments) > 1 else 0.5,
        int(arguments[2]) if len(arguments) > 2 else 8,
        int(arguments[3]) if len(arguments) > 3 else 16,
    )
