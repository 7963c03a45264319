"""Before anything is written: an unknown provider and an endpoint that refuses are one line and exit 2; a
refused connection mid-run is a connection error, never an HTTP 500."""

from __future__ import annotations

import socket

import litellm
import pytest

from harness.models import preflight
from harness.models.retries import describe_error
from tests.helpers.openai_server import reply

pytestmark = pytest.mark.usefixtures("openai_key")


def refusing_endpoint() -> tuple[str, socket.socket]:
    """A loopback port bound but not listening: connections to it are refused (kept bound, so no one else
    takes it while the test runs)."""
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    return f"http://127.0.0.1:{held.getsockname()[1]}/v1", held


def one_line_error(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, output
    return lines[0]


def test_an_unknown_provider_is_refused_before_the_run(mini):
    outcome = mini.run("--model", "foo/gemma")
    assert outcome.exit_code == 2
    line = one_line_error(outcome.output)
    assert "--model foo/gemma: litellm knows no provider 'foo'" in line and "hosted_vllm/" in line
    assert not outcome.run_dir.exists()


def test_a_refused_api_base_is_one_line_naming_the_endpoint(mini):
    url, held = refusing_endpoint()
    with held:
        outcome = mini.run("--model", "openai/x", "--api-base", url)
    assert outcome.exit_code == 2
    line = one_line_error(outcome.output)
    assert f"--api-base {url}: cannot connect" in line
    assert not outcome.run_dir.exists()


def test_a_server_that_takes_the_connection_but_does_not_answer_is_busy_not_down(mini, openai_server, monkeypatch):
    """llama.cpp after a Ctrl-C: still generating the abandoned reply, its /v1/models hangs; the resume (any
    run) starts, saying so, and its calls wait their turn."""
    monkeypatch.setattr(preflight, "_ANSWER_TIMEOUT_S", 0.2)
    openai_server.models_busy = True
    openai_server.push(reply("<answer>42</answer>"))
    outcome = mini.run("--model", "openai/test-model", "--api-base", openai_server.url)
    assert outcome.exit_code == 0 and [row["status"] for row in outcome.rows] == ["answered"]
    [line] = [line for line in outcome.output.splitlines() if "busy" in line]
    assert line.startswith(f"warning: --api-base {openai_server.url}: the server took the connection but has not")
    assert "cannot connect" not in outcome.output


def test_every_model_of_a_sweep_is_checked_before_the_sweep_starts(mini, openai_server):
    outcome = mini.run("--model", "oracle,foo/gemma", "--api-base", openai_server.url)
    assert outcome.exit_code == 2
    assert "--model foo/gemma" in one_line_error(outcome.output)
    assert not mini.results_dir.exists() or not any(mini.results_dir.iterdir())


def test_a_refused_connection_is_no_http_status():
    error = litellm.APIConnectionError(message="Connection error.", llm_provider="openai", model="x")
    described = describe_error(error)
    assert described["status"] is None and described["error"] == "APIConnectionError"
