"""`python -m harness view RUN`: one self-contained HTML file (works from disk, no server) to browse a run."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

from harness.analysis.summary import ALL, Cell
from harness.records.results import MODE_FIELDS
from harness.records.run_folder import RunFolder
from harness.records.trajectory import is_finished, read_trajectory

TEMPLATE = Path(__file__).with_name("templates") / "viewer.html"
_PLACEHOLDER = re.compile(r"__(TITLE|DATA)__")
# Inside <script>, `<!--`, `<script` and `</script` change how the HTML parser reads the rest of the
# page; `\u` escapes keep the JSON's value while no markup character is left in its text.
_SCRIPT_SAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})


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
    evidence = next((event for event in events if event["event"] == "evidence"), {})
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
        "reasons": end.get("reasons") or [],
        "failure_mode": end.get("failure_mode"),
        "evidence_recall": end.get("evidence_recall"),
        "evidence": evidence.get("evidence", []),
        "touches": evidence.get("touches", []),
        "evidence_method": evidence.get("method"),
        "steps": steps,
    }


def run_header(folder: RunFolder) -> dict[str, Any]:
    """Model, protocol, accuracy by grading mode, tokens and cost of the run's latest rows."""
    record = folder.read_record()
    rows = list(folder.latest_rows().values())
    model = record.config["model"]
    cell = Cell(model, ALL, rows)
    costs = cell.cost()
    return {
        "model": model,
        "protocol": {key: value for key, value in record.protocol.items() if not isinstance(value, dict)},
        "episodes": cell.n,
        "accuracy": {mode: round(100 * cell.accuracy(mode), 1) for mode in MODE_FIELDS},
        "input_tokens": cell.input_tokens(),
        "output_tokens": cell.output_tokens(),
        "cost_usd": None if costs is None else round(costs, 4),
    }


def embedded_json(data: object) -> str:
    """JSON that is safe as the text of a `<script>` element whatever strings it holds.

    ASCII only: U+2028/U+2029 (line breaks to older JavaScript) and lone surrogates become escapes too.
    """
    return json.dumps(data, ensure_ascii=True).translate(_SCRIPT_SAFE)


def write_viewer(run_dir: Path, out: Path | None) -> Path:
    folder = RunFolder(run_dir)
    config = folder.read_record().config
    files = folder.trajectories()
    episodes = [episode_view(events, config["max_turns"], config["time_limit"])
                for events in map(read_trajectory, files) if events]  # fmt: skip
    data = {"run": run_dir.name, "header": run_header(folder), "episodes": episodes}
    values = {"TITLE": html.escape(run_dir.name), "DATA": embedded_json(data)}
    page = _PLACEHOLDER.sub(lambda match: values[match.group(1)], TEMPLATE.read_text(encoding="utf-8"))
    out = out or run_dir / "viewer.html"
    out.write_text(page, encoding="utf-8")
    return out
