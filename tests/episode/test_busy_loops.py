"""Busy loops filling the sandbox's CPU quota end as the agent's time limit on every backend: apart from the
other failures of tests/episode/test_agent_failures.py, as the loops fill the machine's cores (a serial module)."""

from __future__ import annotations

import pytest

from tests.episode.test_agent_failures import backend  # noqa: F401 (the fixture: each real backend)

BUSY_LOOPS = "for i in $(seq 500); do (while :; do :; done) & done; wait"


@pytest.mark.slow
def test_busy_loops_filling_the_cpu_quota_end_as_a_time_limit_not_a_sandbox_error(mini, backend):  # noqa: F811
    """500 busy loops share the sandbox's CPU with what enforces its limits; on Docker they run in the idle
    class, so the server's timer, kill and sweep still answer at once (they came more than 30 s late there:
    `sandbox_error`, retried)."""
    model = mini.script([{"bash": BUSY_LOOPS}, "<answer>42</answer>"])
    outcome = mini.run("--model", model, "--sandbox", backend, "--time-limit", "5")
    [row] = outcome.rows
    assert row["status"] == "time_limit", row["detail"]
    assert row["duration_s"] < 20
