"""The README's main job, as a user runs it: the oracle over the bundled demo, every task correct."""

from __future__ import annotations

import json
import subprocess
import sys

import yaml

from tests.conftest import REPO


def test_oracle_answers_every_demo_task_correctly(tmp_path):
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness",
            "--model",
            "oracle",
            "--domain",
            "demo",
            "--workers",
            "2",
            "--results-dir",
            str(tmp_path),
            "--run-id",
            "demo-oracle",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stderr
    run_dir = tmp_path / "demo-oracle"
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    tasks = [json.loads(line) for line in (REPO / "tasks" / "demo.jsonl").read_text().splitlines()]
    assert sorted(r["task_id"] for r in rows) == sorted(t["id"] for t in tasks)
    assert all(r["status"] == "answered" and r["verdict"] == "correct" for r in rows), rows
    assert all(r["verdict_strict"] == "correct" for r in rows)
    for task in tasks:
        events = [json.loads(line) for line in (run_dir / "episodes" / "demo" / f"{task['id']}.jsonl").open()]
        assert events[0]["event"] == "episode_start" and events[-1]["event"] == "episode_end"
    run_record = yaml.safe_load((run_dir / "run.yaml").read_text())
    assert run_record["collections"]["demo"]["hash"].startswith("sha256-tree:")
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["domains"][0]["accuracy_default"] == 1.0
    assert "demo" in completed.stdout and "100.0%" in completed.stdout


def test_demo_has_the_promised_shape():
    documents = sorted((REPO / "collections" / "demo").glob("*.md"))
    assert len(documents) >= 30
    assert len({d.name.split("_")[0] for d in documents}) >= 3
    tasks = [json.loads(line) for line in (REPO / "tasks" / "demo.jsonl").read_text().splitlines()]
    assert len(tasks) >= 10
    assert all(len(t["evidence"]) >= 2 and t["solution"] for t in tasks)
    formats = {t["answer_format"] for t in tasks}
    assert {"x.xxx%", "x.xxx x", "integer"} <= formats
    assert any("pp/year" in f for f in formats) and any(
        "pp" in f and "+" in t["answer"] for t in tasks for f in [t["answer_format"]]
    )
