"""Time from a command's start to its first model call, ours next to inspect_ai's, over an AGORA-sized archive.

Run: python bench/first_start.py [SCALE] [ROUNDS] [--docker] [--before=CHECKOUT]
(default SCALE 1.0: 8 domains, 9,664 Markdown files, ~1.5 GB, 362 tasks, built by bench/start_up.py in a
new folder under /tmp and removed after; ROUNDS 2). Needs inspect_ai installed (the `bench` extra).

Both sides are whole processes started from here, as a user starts them, against one loopback
OpenAI-compatible server that notes when the first chat completion request arrives; the process is
killed then. Ours: `python -m harness --model openai/bench --api-base ... --domain all` (local sandbox,
and Docker with --docker), first with an empty cache folder (the first start: collection hashes and the
leakage check over every document), then again with that cache (a later start). inspect_ai: `inspect
eval` of a task with the same 362 samples, a `bash` tool and its local sandbox, the collection's folder
named in the prompt. --before=CHECKOUT also times another checkout of this project (an older commit, for a
before/after). Rounds interleave the sides; figures are medians.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from start_up import DOMAINS, build

_TIMEOUT_S = 180.0

INSPECT_TASK = """
import json
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.agent import react
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import includes
from inspect_ai.tool import bash

ROOT = Path(__file__).parent


@task
def archive() -> Task:
    samples = []
    for tasks in sorted((ROOT / "tasks").glob("*.jsonl")):
        for line in tasks.read_text().splitlines():
            row = json.loads(line)
            folder = ROOT / "collections" / row["domain"]
            prompt = f"The documents are in {folder}. {row['question']}"
            samples.append(Sample(id=row["id"], input=prompt, target=row["answer"]))
    return Task(dataset=MemoryDataset(samples), solver=react(tools=[bash(timeout=60)]), scorer=includes(),
                sandbox="local")
"""


class FirstCall(ThreadingHTTPServer):
    """An OpenAI-compatible endpoint that notes when the first chat completion request came."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.first: float | None = None
        self.arrived = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class _Handler(BaseHTTPRequestHandler):
    server: FirstCall

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.server.first is None:
            self.server.first = time.monotonic()
            self.server.arrived.set()
        body = json.dumps(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": "bench",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "<answer>0</answer>"},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        body = json.dumps({"object": "list", "data": [{"id": "bench", "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def to_first_call(argv: list[str], env: dict[str, str], cwd: Path, log: Path) -> float:
    """Seconds from starting ARGV to its first model call; the process (its whole group) is killed then."""
    server = FirstCall()
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    argv = [part.replace("{URL}", server.url) for part in argv]
    env = {key: value.replace("{URL}", server.url) for key, value in env.items()}
    with log.open("ab") as output:
        started = time.monotonic()
        child = subprocess.Popen(argv, env=env, cwd=cwd, stdout=output, stderr=output, start_new_session=True)
        try:
            while not server.arrived.wait(0.05):
                if child.poll() is not None or time.monotonic() - started > _TIMEOUT_S:
                    tail = log.read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"{argv[:4]} ended or hung before a model call (exit {child.poll()}):\n{tail}")
        finally:
            with contextlib.suppress(ProcessLookupError):  # it ended on its own
                os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            server.shutdown()
            server.server_close()
    assert server.first is not None
    return server.first - started


def ours(root: Path, cache: Path, run: str, sandbox: str) -> list[str]:
    prices = root / "prices.yaml"
    prices.write_text("openai/bench: {input: 0, output: 0}\n")
    return [
        sys.executable,
        "-m",
        "harness",
        "--model",
        "openai/bench",
        "--api-base",
        "{URL}",
        "--api-key-env",
        "BENCH_KEY",
        "--context-window",
        "32000",
        "--max-output-tokens",
        "1000",
        "--prices",
        str(prices),
        "--domain",
        "all",
        "--tasks-dir",
        str(root / "tasks"),
        "--collections-dir",
        str(root / "collections"),
        "--results-dir",
        str(root / "results"),
        "--run-id",
        run,
        "--cache-dir",
        str(cache),
        "--sandbox",
        sandbox,
    ]


def inspect(root: Path, run: str) -> list[str]:
    inspect_cli = Path(sys.executable).parent / "inspect"
    return [str(inspect_cli), "eval", "archive.py", "--model", "openai/bench", "--log-dir", str(root / run)]


def main(scale: float, rounds: int, docker: bool, before: str | None) -> None:
    root = Path(tempfile.mkdtemp(prefix="harness-first-start-"))
    try:
        started = time.monotonic()
        build(root, scale)
        (root / "archive.py").write_text(INSPECT_TASK)
        files = [path for path in (root / "collections").rglob("*") if path.is_file()]
        size = sum(path.stat().st_size for path in files)
        print(
            f"built {len(files)} files, {size / 1e9:.2f} GB, {len(DOMAINS)} domains, {time.monotonic() - started:.0f} s"
        )
        project = str(Path(__file__).resolve().parent.parent)  # this checkout's harness, wherever the command runs
        env = dict(os.environ) | {
            "BENCH_KEY": "x",
            "OPENAI_API_KEY": "x",
            "OPENAI_BASE_URL": "{URL}",
            "PYTHONPATH": project,
        }
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        log = root / "output.log"
        sides = ["ours local, first start", "ours local, later start", "inspect_ai local"]
        if docker:
            sides[2:2] = ["ours docker, first start", "ours docker, later start"]
        if before is not None:
            sides[:0] = ["before local, first start", "before local, later start"]
        samples: dict[str, list[float]] = {side: [] for side in sides}
        for number in range(rounds):
            if before is not None:
                old = env | {"PYTHONPATH": before}
                cache = root / f"cache-before-{number}"
                first = to_first_call(ours(root, cache, f"before-{number}-a", "local"), old, root, log)
                samples["before local, first start"].append(first)
                later = to_first_call(ours(root, cache, f"before-{number}-b", "local"), old, root, log)
                samples["before local, later start"].append(later)
            for sandbox in ["local", "docker"] if docker else ["local"]:
                cache = root / f"cache-{sandbox}-{number}"
                first = to_first_call(ours(root, cache, f"{sandbox}-{number}-a", sandbox), env, root, log)
                samples[f"ours {sandbox}, first start"].append(first)
                later = to_first_call(ours(root, cache, f"{sandbox}-{number}-b", sandbox), env, root, log)
                samples[f"ours {sandbox}, later start"].append(later)
            samples["inspect_ai local"].append(to_first_call(inspect(root, f"logs-{number}"), env, root, log))
        yardstick = statistics.median(samples["inspect_ai local"])
        print("| start | to first model call (median) | runs | vs inspect_ai |\n|---|---|---|---|")
        for side, values in samples.items():
            middle = statistics.median(values)
            shown = ", ".join(f"{value:.1f}" for value in values)
            print(f"| {side} | {middle:.2f} s | {shown} | {middle / yardstick:.2f}x |")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    arguments = [argument for argument in sys.argv[1:] if not argument.startswith("--")]
    main(
        float(arguments[0]) if arguments else 1.0,
        int(arguments[1]) if len(arguments) > 1 else 2,
        "--docker" in sys.argv,
        next((argument.split("=", 1)[1] for argument in sys.argv if argument.startswith("--before=")), None),
    )
