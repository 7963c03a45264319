"""`python -m harness view RUN`: one self-contained HTML file (works from disk, no server) to browse a run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.run_folder import RunFolder
from harness.trajectory import is_finished, read_trajectory

TEMPLATE = Path(__file__).with_name("templates") / "viewer.html"


def episode_view(events: list[dict[str, Any]], max_turns: int, time_limit: float) -> dict[str, Any]:
    """One episode as the viewer shows it: its outcome and its steps (reply, command, output, budgets)."""
    start = events[0]
    end = events[-1] if is_finished(events) else {"status": "unfinished", "verdict": "none"}
    steps: list[dict[str, Any]] = []
    for event in events:
        kind = event["event"]
        if kind == "model_call":
            steps.append({"turn": event["turn"], "text": event["response"]["text"],
                          "turns_left": max_turns - event["turn"],
                          "seconds_left": round(time_limit - (event["time"] - start["time"]))})  # fmt: skip
        elif kind == "action" and steps:
            steps[-1]["command"] = event["command"]
        elif kind == "observation" and steps:
            steps[-1] |= {key: event[key] for key in ("stdout", "stderr", "exit_code", "timed_out")}
            steps[-1]["seconds_left"] = round(time_limit - (event["time"] - start["time"]))
        elif kind == "format_error" and steps:
            steps[-1]["problem"] = event["problem"]
    task = start.get("task", {})
    return {
        "key": f"{start['domain']}/{start['task_id']}",
        "domain": start["domain"],
        "task_id": start["task_id"],
        "question": task.get("question", ""),
        "gold": task.get("answer", ""),
        "status": end.get("status"),
        "verdict": end.get("verdict"),
        "answer": end.get("answer"),
        "turns": end.get("turns", len(steps)),
        "detail": end.get("detail"),
        "steps": steps,
    }


def write_viewer(run_dir: Path, out: Path | None) -> Path:
    folder = RunFolder(run_dir)
    config = folder.read_record()["config"]
    files = folder.trajectories()
    episodes = [episode_view(events, config["max_turns"], config["time_limit"])
                for events in map(read_trajectory, files) if events]  # fmt: skip
    payload = json.dumps({"run": run_dir.name, "episodes": episodes}, ensure_ascii=False).replace("</", "<\\/")
    html = TEMPLATE.read_text(encoding="utf-8").replace("__TITLE__", run_dir.name).replace("__DATA__", payload)
    out = out or run_dir / "viewer.html"
    out.write_text(html, encoding="utf-8")
    return out
