"""The run's exit codes, as docs/guide/evaluations.md documents them: 0 when every selected episode ended as
the agent's outcome, 1 when any ended as our or the provider's failure, 3 when nothing was selected."""

from __future__ import annotations

import json

import pytest

from harness.inputs.tasks import load_task_file, shard_tasks
from tests.helpers.openai_server import fault, reply

pytestmark = pytest.mark.usefixtures("openai_key")


def two_tasks(mini) -> None:
    task = {"domain": "mini", "question": "Q?", "answer": "42"}
    (mini.tasks_dir / "mini.jsonl").write_text("".join(json.dumps({"id": i, **task}) + "\n" for i in ("t1", "t2")))


def provider_run(mini, server):
    return mini.run("--model", "openai/test-model", "--api-base", server.url, "--retry-errors", "0", "--workers", "1")


def test_a_run_whose_every_episode_failed_exits_1(mini, openai_server):
    two_tasks(mini)
    openai_server.push(fault(400, "no"), fault(400, "no"))
    outcome = provider_run(mini, openai_server)
    assert [row["status"] for row in outcome.rows] == ["model_error", "model_error"]
    assert outcome.exit_code == 1
    assert "2 in run" in outcome.output


def test_a_run_with_some_failed_episodes_exits_1(mini, openai_server):
    two_tasks(mini)
    openai_server.push(fault(400, "no"), reply("<answer>7</answer>"))
    outcome = provider_run(mini, openai_server)
    assert sorted(row["status"] for row in outcome.rows) == ["answered", "model_error"]
    assert outcome.exit_code == 1


def test_a_run_whose_episodes_all_ended_as_the_agents_outcome_exits_0_even_when_wrong(mini, openai_server):
    two_tasks(mini)
    openai_server.push(reply("<answer>7</answer>"), reply("<answer>42</answer>"))
    outcome = provider_run(mini, openai_server)
    assert sorted(row["verdict"] for row in outcome.rows) == ["correct", "wrong_value"]
    assert outcome.exit_code == 0


def test_a_shard_that_selects_no_task_exits_3_and_writes_nothing(mini):
    [task] = load_task_file(mini.tasks_dir / "mini.jsonl")
    empty = next(shard for shard in ("1/2", "2/2") if not shard_tasks([task], shard))
    outcome = mini.run("--model", "oracle", "--limit", "2", "--shard", empty)
    assert outcome.exit_code == 3
    assert f"no task selected by --limit 2 --shard {empty}" in outcome.output
    assert not mini.results_dir.exists() or not any(mini.results_dir.iterdir())
