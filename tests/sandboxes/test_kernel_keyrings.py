"""A run's agent reaches no kernel keyring of the host: not the runner's session keyring, and not a key one
run's agent planted for the next (issue 30, finding 1). The sandbox-level checks, on every backend, are in
test_sandbox_containment.py; these run the command line as a user would."""

from __future__ import annotations

import pytest
import yaml

from tests.helpers.kernel_keys import fresh_key, join_new_session_keyring_with, probe_command


def test_an_agent_cannot_read_the_session_keyring_of_the_runner_that_started_it(mini):
    key = fresh_key("run")
    join_new_session_keyring_with(key)
    outcome = mini.run("--model", mini.script([{"bash": probe_command(key)}, "<answer>1</answer>"]))
    assert outcome.exit_code == 0 and outcome.rows[0]["status"] == "answered"
    logged = (outcome.run_dir / "episodes" / "mini" / "t1.jsonl").read_text()
    assert "missing -3" in logged and key.payload not in logged


@pytest.fixture
def setpriv_bwrap(bwrap_refusing_user_namespaces: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run falls back to `setpriv`: each command runs as the episode's host uid with no user namespace, so
    a uid's user keyring, which the kernel keeps after its processes end, is within its reach."""
    monkeypatch.setenv("HARNESS_BWRAP", bwrap_refusing_user_namespaces)


def test_on_the_setpriv_path_one_run_cannot_plant_a_key_for_the_next(mini, setpriv_bwrap):
    key = fresh_key("setpriv")
    planter = mini.run("--model", mini.script([{"bash": probe_command(key, plant=True)}, "<answer>1</answer>"]))
    reader = mini.run("--model", mini.script([{"bash": probe_command(key)}, "<answer>1</answer>"]), run_id="next")
    for outcome in (planter, reader):
        assert outcome.exit_code == 0 and outcome.rows[0]["status"] == "answered", outcome.output
        assert "via setpriv" in yaml.safe_load((outcome.run_dir / "run.yaml").read_text())["sandbox"]["user"]
    planted = (planter.run_dir / "episodes" / "mini" / "t1.jsonl").read_text()
    read = (reader.run_dir / "episodes" / "mini" / "t1.jsonl").read_text()
    assert "refused -4" in planted and "planted -4" not in planted
    assert "missing -4" in read and key.payload not in read
