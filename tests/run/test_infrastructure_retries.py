"""Infrastructure failures inside a run: --retry-errors runs them again, --max-error-rate stops a failing model.

Real litellm over real HTTP to the local test server, real bubblewrap sandboxes."""

from __future__ import annotations

import json
import threading

import pytest

from tests.helpers.openai_server import fault, two_step_agent

pytestmark = pytest.mark.usefixtures("openai_key")


def write_tasks(mini, count: int) -> None:
    base = json.loads((mini.tasks_dir / "mini.jsonl").read_text())
    lines = [
        json.dumps(base | {"id": f"t{i}", "question": f"{base['question']} (task t{i})"}) for i in range(1, count + 1)
    ]
    (mini.tasks_dir / "mini.jsonl").write_text("\n".join(lines) + "\n")


def failing_first_attempts(task: str, failures: int):
    """two_step_agent, but the first call of TASK's first FAILURES attempts is refused (a 401: not retried by
    the provider client, so the episode ends as model_error)."""
    lock, refused = threading.Lock(), [0]

    def respond(request):
        first_call = len(request["messages"]) == 2
        with lock:
            if first_call and f"(task {task})" in request["messages"][1]["content"] and refused[0] < failures:
                refused[0] += 1
                return fault(401, "refused for this test")
        return two_step_agent(request)

    return respond


def provider_run(mini, server, *extra):
    return mini.run("--model", "openai/test-model", "--api-base", server.url, *extra)


def test_an_infrastructure_failure_runs_again_within_the_run(mini, openai_server):
    write_tasks(mini, 3)
    openai_server.respond = failing_first_attempts("t2", 2)
    outcome = provider_run(mini, openai_server, "--retry-errors", "2", "--workers", "2")
    assert outcome.exit_code == 0
    rows = {row["task_id"]: row for row in outcome.rows}
    assert len(outcome.rows) == 3  # one row per task: the failed attempts are not rows
    assert (rows["t2"]["status"], rows["t2"]["attempt"]) == ("answered", 3)
    assert rows["t1"]["attempt"] == rows["t3"]["attempt"] == 1
    previous = sorted(p.name for p in (outcome.run_dir / "episodes" / "mini" / "previous").iterdir())
    assert previous == ["t2.1.jsonl", "t2.2.jsonl"]
    for name in previous:
        lines = (outcome.run_dir / "episodes" / "mini" / "previous" / name).read_text().splitlines()
        end = json.loads(lines[-1])
        assert (end["event"], end["status"], end["attempt"]) == ("episode_end", "model_error", int(name[3]))


def test_retries_run_out_into_the_failure_row(mini, openai_server):
    openai_server.respond = failing_first_attempts("t1", 5)
    write_tasks(mini, 1)
    outcome = provider_run(mini, openai_server, "--retry-errors", "1")
    [row] = outcome.rows
    assert (row["status"], row["attempt"]) == ("model_error", 2)


def test_a_rejected_key_stops_the_model_after_the_error_window(mini, openai_server, monkeypatch):
    write_tasks(mini, 30)
    monkeypatch.setenv("BAD_KEY", "sk-revoked")
    openai_server.rejected_keys = {"sk-revoked"}
    openai_server.respond = two_step_agent
    outcome = provider_run(
        mini,
        openai_server,
        "--api-key-env",
        "BAD_KEY",
        "--retry-errors",
        "0",
        "--workers",
        "2",
        "--error-window",
        "5",
        "--max-error-rate",
        "0.5",
    )
    assert outcome.exit_code == 1
    assert 5 <= len(outcome.rows) <= 5 + 2  # the window, and the episodes already running
    assert all(row["status"] == "model_error" for row in outcome.rows)
    [line] = [line for line in outcome.output.splitlines() if "--max-error-rate" in line]
    assert "Incorrect API key provided" in line and "not started" in line
