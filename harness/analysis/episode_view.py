"""One episode, and one run's header, as the viewer shows them (plain data, sent to the page as JSON)."""

from __future__ import annotations

from typing import Any

from harness.analysis.runs import run_key
from harness.analysis.summary import ALL, Cell
from harness.records.results import MODE_FIELDS
from harness.records.run_folder import RunFolder
from harness.records.run_record import RunRecord
from harness.records.trajectory import is_finished


def episode_view(events: list[dict[str, Any]], max_turns: int, time_limit: float) -> dict[str, Any]:
    """Its outcome and its steps: reply, command, output, budgets left, and the turn's model and command time."""
    start = events[0]
    end = events[-1] if is_finished(events) else {"status": "unfinished", "verdict": "none"}
    steps: list[dict[str, Any]] = []
    for event in events:
        kind = event["event"]
        if kind == "model_call":
            steps.append({"turn": event["turn"], "text": event["response"]["text"],
                          "model_s": event.get("latency_s"), "turns_left": max_turns - event["turn"],
                          "seconds_left": round(time_limit - (event["time"] - start["time"]))})  # fmt: skip
        elif kind == "action" and steps:
            steps[-1]["command"] = event["command"]
        elif kind == "observation" and steps:
            steps[-1] |= {key: event[key] for key in ("stdout", "stderr", "exit_code", "timed_out")}
            steps[-1]["command_s"] = event.get("duration_s")
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
        "model_s": round(sum(step.get("model_s") or 0 for step in steps), 3),
        "command_s": round(sum(step.get("command_s") or 0 for step in steps), 3),
        "steps": steps,
    }


def run_header(folder: RunFolder, record: RunRecord) -> dict[str, Any]:
    """Model, label, protocol, accuracy by grading mode, tokens and cost of the run's (RECORD's) latest rows."""
    rows = list(folder.latest_rows().values())
    model = record.config["model"]
    cell = Cell(model, ALL, rows)
    costs = cell.cost()
    return {
        "model": model,
        "label": run_key(record),
        "protocol": {key: value for key, value in record.protocol.items() if not isinstance(value, dict)},
        "episodes": cell.n,
        "accuracy": {mode: round(100 * cell.accuracy(mode), 1) for mode in MODE_FIELDS},
        "input_tokens": cell.input_tokens(),
        "output_tokens": cell.output_tokens(),
        "cost_usd": None if costs is None else round(costs, 4),
    }
