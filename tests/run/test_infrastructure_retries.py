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
    """two_step_agent, but the first call of TASK's first FAILURES attempts fails (a 503, which `provider_run`
    does not retry within the call, so the episode ends as model_error)."""
    lock, refused = threading.Lock(), [0]

    def respond(request):
        first_call = len(request["messages"]) == 2
        with lock:
            if first_call and f"(task {task})" in request["messages"][1]["content"] and refused[0] < failures:
                refused[0] += 1
                return fault(503, "unavailable for this test")
        return two_step_agent(request)

    return respond


def provider_run(mini, server, *extra):
    return mini.run("--model", "openai/test-model", "--api-base", server.url, "--max-retries", "0", *extra)


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


def test_failing_episodes_stop_the_model_after_the_error_window(mini, openai_server):
    write_tasks(mini, 30)
    openai_server.respond = lambda request: fault(503, "overloaded for this test")
    outcome = provider_run(
        mini,
        openai_server,
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
    assert "overloaded for this test" in line and "not started" in line


def test_a_rejected_key_stops_the_run_after_its_first_episodes_with_the_reason(mini, openai_server, monkeypatch):
    write_tasks(mini, 30)
    monkeypatch.setenv("BAD_KEY", "sk-revoked")
    openai_server.rejected_keys = {"sk-revoked"}
    openai_server.respond = two_step_agent
    outcome = provider_run(mini, openai_server, "--api-key-env", "BAD_KEY", "--workers", "1")
    assert outcome.exit_code == 1
    assert [(row["status"], row["attempt"]) for row in outcome.rows] == [("model_error", 1)] * 3
    assert len(openai_server.requests) == 3  # one call an episode: a refused key is not asked again
    lines = outcome.output.splitlines()
    [first] = [line for line in lines if "first model_error" in line]
    assert "Incorrect API key provided" in first
    [stop] = [line for line in lines if "not started" in line]
    assert "first 3 episodes failed the same way, which no retry mends" in stop and "Incorrect API key" in stop


def test_a_provider_host_that_does_not_resolve_ends_the_run_in_seconds(mini, monkeypatch):
    """A fake key and no network: the provider's host has no address. RFC 2606's `.invalid` never resolves."""
    write_tasks(mini, 6)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://api.provider.invalid/v1")
    outcome = mini.run("--model", "openai/test-model", "--workers", "1", "--max-retries", "2")
    assert outcome.exit_code == 1
    assert [(row["status"], row["attempt"]) for row in outcome.rows] == [("model_error", 1)] * 3
    assert all(row["retry_wait_s"] == 0 for row in outcome.rows)  # no backoff: no retry mends it
    [first] = [line for line in outcome.output.splitlines() if "first model_error" in line]
    assert "cannot connect" in first and "no retry mends this" in first
    assert any(cause in first.lower() for cause in ("name or service not known", "name resolution"))
