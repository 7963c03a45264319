"""The model id each provider returned is recorded on every call, and `report` flags a run whose calls came back
from more than one (a snapshot swapped behind the alias)."""

from __future__ import annotations

import pytest

from harness.cli.main import main
from harness.records.events import ModelCallEvent
from harness.records.reading import read_events
from tests.helpers.openai_server import Step, reply

pytestmark = pytest.mark.usefixtures("openai_key")


def answered_as(model_id: str, **step: str) -> Step:
    """A reply whose `model` names MODEL_ID, as a provider names the snapshot that answered."""
    made = reply(**step)
    made.body = {"model": model_id}
    return made


def run_two_episodes(mini, server, second_id: str):
    mini.task_copies(2)
    server.push(
        answered_as("test-model-2026-01-15", bash="cat documents/ledger.md"),
        answered_as("test-model-2026-01-15", text="<answer>42</answer>"),
        answered_as("test-model-2026-01-15", bash="cat documents/ledger.md"),
        answered_as(second_id, text="<answer>42</answer>"),
    )
    return mini.run("--model", "openai/test-model", "--api-base", server.url, "--workers", "1")


def test_every_model_call_records_the_model_id_the_provider_returned(mini, openai_server):
    outcome = run_two_episodes(mini, openai_server, "test-model-2026-03-02")
    assert outcome.exit_code == 0, outcome.output
    calls = {
        task: [
            e.event.model_id
            for e in read_events(outcome.run_dir / "episodes" / "mini" / f"{task}.jsonl")
            if isinstance(e.event, ModelCallEvent)
        ]
        for task in ("t1", "t2")
    }
    assert calls == {
        "t1": ["test-model-2026-01-15", "test-model-2026-01-15"],
        "t2": ["test-model-2026-01-15", "test-model-2026-03-02"],
    }
    rows = {row["task_id"]: row["model_ids"] for row in outcome.rows}
    assert rows == {"t1": {"test-model-2026-01-15": 2}, "t2": {"test-model-2026-01-15": 1, "test-model-2026-03-02": 1}}


def test_report_flags_a_run_whose_calls_came_back_from_two_model_ids(mini, openai_server, capsys):
    outcome = run_two_episodes(mini, openai_server, "test-model-2026-03-02")
    assert main(["report", str(outcome.run_dir)]) == 0
    printed = capsys.readouterr().out
    report = (outcome.run_dir / "report" / "report.md").read_text()
    expected = (
        "openai/test-model: calls came back from 2 model ids: `test-model-2026-01-15` (3 calls, 2 episodes), "
        "`test-model-2026-03-02` (1 calls, 1 episodes)"
    )
    assert f"- {expected}" in report
    assert f"warning: {expected}" in printed


def test_report_says_nothing_of_model_ids_when_one_answered_every_call(mini, openai_server, capsys):
    outcome = run_two_episodes(mini, openai_server, "test-model-2026-01-15")
    assert main(["report", str(outcome.run_dir)]) == 0
    printed = capsys.readouterr().out
    report = (outcome.run_dir / "report" / "report.md").read_text()
    assert "model ids" not in report and "warning:" not in printed
    assert outcome.rows[0]["model_ids"] == {"test-model-2026-01-15": 2}
