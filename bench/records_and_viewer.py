"""Records, the viewer and re-grading at the evaluation's size: eight run folders of 362 episodes.

Run: python bench/records_and_viewer.py [EPISODES_PER_RUN] [TURNS]   (default 362 and 46)
Each folder is written by the real runner and loop (plan_run, execute_run, the prompts, the trajectory
writer) with a scripted model; only the sandbox is synthetic, answering each command with 2-20 KB of
Markdown-table text, as real episodes' outputs are. Then it prints, per folder, its bytes on disk against
the bytes of observations the model was shown (goal: within 1.2x); `view` of the eight served, opened in
headless Chromium through Playwright: time to the listed episodes (goal: 2 s), the runner's and
Chromium's memory after opening an episode and the task x model grid (goal: runner 200 MB); and the peak
memory of `replay --regrade` of one folder (goal: 200 MB).
"""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.records.trajectory import read_trajectory
from harness.sandboxes.backend import Capabilities
from harness.sandboxes.base import ExecResult

RUNS = 8
MARKER = f"--harness-bench-{id(object())}"
"""An argument Chromium ignores, to find the browser process this bench started among others."""
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass
class SyntheticSandbox:
    rng: random.Random
    pool: list[str]

    def start(self) -> None:
        pass

    def execute(self, command: str, timeout_s: float) -> ExecResult:
        if "command -v" in command:  # the run's tool check
            return ExecResult(
                "".join(f"{name}\t/usr/bin/{name}\n" for name in re.findall(r"printf '%s\\t%s\\n' (\w+)", command)),
                "",
                0,
                False,
                False,
                0,
                0.01,
            )
        lines, size = [], self.rng.randint(2_000, 20_000)
        while sum(map(len, lines)) < size:
            lines.append(self.rng.choice(self.pool))
        text = "\n".join(lines) + "\n"
        return ExecResult(text, "", 0, False, False, len(text), round(self.rng.uniform(0.01, 2.0), 3))

    def close(self) -> None:
        pass

    def describe(self) -> dict[str, object]:
        return {"backend": "synthetic"}


@dataclass
class SyntheticBackend:
    facts: dict[str, Any] = field(default_factory=lambda: {"backend": "synthetic"})
    rng: random.Random = field(default_factory=lambda: random.Random(3))
    pool: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities()

    def new_sandbox(self, domain: str, collection: Path, episode_name: str, cancel: threading.Event) -> Any:
        with self.lock:
            return SyntheticSandbox(random.Random(self.rng.random()), self.pool)


def write_runs(root: Path, episodes: int, turns: int) -> list[Path]:
    from harness.cli.main import main
    from harness.run.planning import plan

    rng = random.Random(11)
    pool = [
        f"| {rng.randint(1990, 2024)} | R{rng.randint(1, 99)} | {rng.randint(0, 99999):,}.{rng.randint(0, 9)} |"
        f" {rng.uniform(-20, 20):.2f} % |"
        for _ in range(5000)
    ]
    plan.backend_of = lambda *arguments: SyntheticBackend(pool=pool)  # type: ignore[assignment]
    (root / "tasks").mkdir()
    (root / "collections" / "law").mkdir(parents=True)
    (root / "collections" / "law" / "a.md").write_text("| year | value |\n")
    tasks = [
        {"id": f"law-{i:03d}", "domain": "law", "question": f"Question {i}?", "answer": str(i)} for i in range(episodes)
    ]
    (root / "tasks" / "law.jsonl").write_text("".join(json.dumps(task) + "\n" for task in tasks))
    replies = [
        {"text": f"Step {n}: looking further.", "bash": f"rg -n 'R{n % 99}' documents | head -400"}
        for n in range(turns - 1)
    ] + ["The total is <answer>7</answer>"]
    (root / "script.yaml").write_text(yaml.safe_dump(replies))
    runs = []
    for number in range(RUNS):
        code = main(
            [
                "--model",
                f"scripted:{root / 'script.yaml'}",
                "--domain",
                "law",
                "--workers",
                "4",
                "--tasks-dir",
                str(root / "tasks"),
                "--collections-dir",
                str(root / "collections"),
                "--results-dir",
                str(root / "results"),
                "--run-id",
                f"model-{number}",
                "--cache-dir",
                str(root / "cache"),
            ]
        )
        assert code == 0
        runs.append(root / "results" / f"model-{number}")
    return runs


def disk_and_shown(run: Path) -> tuple[int, int]:
    disk = sum(path.stat().st_size for path in run.rglob("*") if path.is_file())
    shown = 0
    for path in sorted((run / "episodes").glob("*/*.jsonl")):
        shown += sum(len(event["text"].encode()) for event in read_trajectory(path) if event["event"] == "observation")
    return disk, shown


def peak_rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+)", status).group(1)) / 1024  # type: ignore[union-attr]


def tree_rss_mb(pid: int) -> float:
    """Current proportional resident memory (PSS: shared pages split among their sharers) of PID and all its
    descendants (Chromium's browser, renderers, GPU process...)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        todo += children.get(current, [])
        try:
            rollup = Path(f"/proc/{current}/smaps_rollup").read_text()
            total += int(re.search(r"Pss:\s+(\d+)", rollup).group(1)) / 1024  # type: ignore[union-attr]
        except (OSError, AttributeError):
            continue
    return total


def measure_viewer(runs: list[Path]) -> None:
    from playwright.sync_api import sync_playwright

    server = subprocess.Popen(
        [sys.executable, "-u", "-m", "harness", "view", *map(str, runs)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        url = re.search(r"(http://\S+)", server.stdout.readline()).group(1)  # type: ignore[union-attr]
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", MARKER]
            )
            page = browser.new_page()
            started = time.perf_counter()
            page.goto(url)
            page.wait_for_selector("body[data-ready=true]", timeout=120_000)
            listed = time.perf_counter() - started
            count = page.locator("tr.episode").count()
            listed_memory = tree_rss_mb(browser_pid())
            started = time.perf_counter()
            page.locator("tr.episode").first.click()
            page.locator(".step").first.wait_for(timeout=60_000)
            opened = time.perf_counter() - started
            page.click("#tab-grid")
            page.locator("tr.task").first.click()
            page.locator("#main .pane").nth(RUNS - 1).wait_for(timeout=60_000)
            heap = page.evaluate("performance.memory ? performance.memory.usedJSHeapSize : 0") / 2**20
            chromium = tree_rss_mb(browser_pid())
            browser.close()
        print(
            f"view of {len(runs)} runs: {count} episodes listed {listed:.2f} s after the request; one episode "
            f"opened in {opened:.2f} s; runner peak {peak_rss_mb(server.pid):.0f} MB; Chromium (PSS) with the list "
            f"{listed_memory:.0f} MB, after the grid's {RUNS} side-by-side episodes {chromium:.0f} MB (JS heap "
            f"{heap:.0f} MB)"
        )
    finally:
        server.terminate()
        server.wait()


def browser_pid() -> int:
    """The Chromium browser process this bench started: the one whose command line carries MARKER."""
    [pid] = [
        int(p.parent.name)
        for p in Path("/proc").glob("[0-9]*/cmdline")
        if MARKER.encode() in _read(p) and b"--type=" not in _read(p)
    ]
    return pid


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def measure_regrade(run: Path) -> None:
    probe = (
        "import resource, sys; from harness.cli.main import main; main(['replay', '--regrade', sys.argv[1]]); "
        "print('peak', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)"
    )
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", probe, str(run)], capture_output=True, text=True, check=True)
    peak = re.search(r"peak (\d+)", done.stdout).group(1)  # type: ignore[union-attr]
    print(f"replay --regrade of one folder: {time.perf_counter() - started:.1f} s, peak {peak} MB")


def main(episodes: int, turns: int) -> None:
    with tempfile.TemporaryDirectory(prefix="harness-records-") as folder:
        started = time.perf_counter()
        runs = write_runs(Path(folder), episodes, turns)
        print(f"wrote {RUNS} folders of {episodes} episodes x {turns} turns in {time.perf_counter() - started:.0f} s")
        print("| folder | on disk | observations shown | ratio |\n|---|---|---|---|")
        for run in runs:
            disk, shown = disk_and_shown(run)
            print(f"| {run.name} | {disk / 1e6:.0f} MB | {shown / 1e6:.0f} MB | {disk / shown:.2f} |")
        measure_regrade(runs[0])
        measure_viewer(runs)


if __name__ == "__main__":
    main(*(int(argument) for argument in sys.argv[1:3])) if len(sys.argv) > 1 else main(362, 46)
