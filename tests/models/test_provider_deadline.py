"""A provider cannot hold an episode past its time nor fill the runner's memory: every call has a wall-clock
deadline that no byte the endpoint sends extends, and a reply body past the cap is refused unread.

The real command line in a subprocess, real litellm over real HTTP to `tests/helpers/hostile_server.py`, real
sandboxes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from harness.models.bounded_http import REPLY_BYTES_CAP
from tests.conftest import REPO
from tests.helpers.hostile_server import HostileServer
from tests.run.test_batch import command, rows_of

SLACK_S = 3.0
"""What the runner may take past a deadline: the poll of its own threads, a loaded machine."""
START_UP_S = 40.0
"""The process's own start (litellm's import, the sandbox) before and after the episode."""


@pytest.fixture
def hostile(request: pytest.FixtureRequest) -> Iterator[HostileServer]:
    server = HostileServer(request.param)
    server.start()
    yield server
    server.stop()


def run(mini, model: str, run_id: str, *extra: str, within_s: float, measured: bool = False):
    """The command's rows, its wall time and its stderr; a run past `within_s` fails the test (it never hangs it).
    An episode that fails is not run again (`--retry-errors 0`): one episode, one call."""
    argv = command(mini, model, run_id, *extra, "--retry-errors", "0")
    if measured:  # the same command, its peak resident memory said last on stderr
        code = (
            "import resource, sys; from harness.cli.main import main; code = main(sys.argv[1:]); "
            "print('maxrss_kb', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr); sys.exit(code)"
        )
        argv = [sys.executable, "-c", code, *argv[3:]]
    started = time.monotonic()
    done = subprocess.run(
        argv,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=within_s,
        env={**os.environ, "OPENAI_API_KEY": "sk-test"},
    )
    elapsed = time.monotonic() - started
    return rows_of(mini.results_dir / run_id / "results.jsonl"), elapsed, done.stderr


@pytest.mark.parametrize(
    ("hostile", "time_limit"), [("trickle", 8), ("slow_header", 6)], indirect=["hostile"], ids=["trickle", "header"]
)
def test_a_provider_that_trickles_bytes_cannot_hold_the_episode_past_its_time(mini, hostile, time_limit):
    limits = ("--time-limit", str(time_limit), "--max-retries", "0")
    rows, elapsed, stderr = run(
        mini, "openai/test-model", "slow", "--api-base", hostile.url, *limits, within_s=time_limit + START_UP_S
    )
    [row] = rows
    assert row["status"] == "time_limit", stderr
    assert time_limit - SLACK_S <= row["duration_s"] <= time_limit + SLACK_S
    assert elapsed <= time_limit + START_UP_S
    assert hostile.requests == 1
    assert closed_within(hostile, 1)  # the connection was shut, not left to the server


@pytest.mark.parametrize("hostile", ["trickle"], indirect=True)
def test_a_trickle_past_the_per_call_limit_is_the_providers_timeout(mini, hostile):
    per_call_s = 5
    limits = ("--time-limit", "600", "--model-timeout", str(per_call_s), "--max-retries", "3")
    rows, elapsed, stderr = run(mini, "openai/test-model", "per-call", "--api-base", hostile.url, *limits, within_s=60)
    [row] = rows
    assert row["status"] == "model_error", stderr
    assert "Timeout" in row["detail"]
    assert elapsed <= per_call_s + START_UP_S
    assert row["duration_s"] < SLACK_S  # the provider's time, not the agent's
    assert per_call_s - SLACK_S <= row["failed_attempts_s"] <= per_call_s + SLACK_S
    assert hostile.requests == 1  # the per-call limit leaves no time for a retry
    assert closed_within(hostile, 1)


@pytest.mark.parametrize("hostile", ["trickle"], indirect=True)
def test_a_judge_that_trickles_bytes_is_cut_at_the_judge_timeout(mini, hostile):
    task = {"id": "open", "domain": "mini", "question": "Q?", "answer": "forty-two", "grader": "judge"}
    (mini.tasks_dir / "mini.jsonl").write_text(json.dumps(task) + "\n")
    judged = ("--judge", "openai/judge-model", "--judge-api-base", hostile.url, "--judge-timeout", "4")
    rows, elapsed, stderr = run(
        mini, mini.script(["<answer>42</answer>"]), "judged", *judged, "--max-retries", "0", within_s=60
    )
    [row] = rows
    assert (row["status"], row["verdict"]) == ("answered", "judge_error"), stderr
    assert elapsed <= 4 + START_UP_S
    assert hostile.requests == 1
    assert closed_within(hostile, 1)


def test_a_reply_past_the_cap_is_the_providers_error_and_never_held_whole(mini, openai_server):
    from tests.helpers.openai_server import reply

    openai_server.push(reply("<answer>42</answer>"))
    _, _, baseline = run(
        mini, "openai/test-model", "small", "--api-base", openai_server.url, within_s=90, measured=True
    )
    hostile = HostileServer("huge", huge_bytes=100 * 10**6)
    hostile.start()
    try:
        rows, _, stderr = run(mini, "openai/test-model", "huge", "--api-base", hostile.url, within_s=90, measured=True)
    finally:
        hostile.stop()
    [row] = rows
    assert row["status"] == "model_error", stderr
    assert "ReplyRefused" in row["detail"] and f"{REPLY_BYTES_CAP // 2**20} MB" in row["detail"]
    assert hostile.requests == 1  # refused, not retried
    assert closed_within(hostile, 1)  # refused unread: the server could not send it all
    extra_mb = (peak_kb(stderr) - peak_kb(baseline)) / 1024
    assert extra_mb < 2 * REPLY_BYTES_CAP / 2**20, f"{extra_mb:.0f} MB more than a run with a small reply"


def closed_within(server: HostileServer, count: int) -> bool:
    """Whether the server saw `count` clients go within two of its writes (it sees one go when it next writes)."""
    deadline = time.monotonic() + 2 * server.interval_s + SLACK_S
    while server.closed_by_client < count and time.monotonic() < deadline:
        time.sleep(0.05)
    return server.closed_by_client == count


def peak_kb(stderr: str) -> int:
    [line] = [line for line in stderr.splitlines() if line.startswith("maxrss_kb ")]
    return int(line.split()[1])
