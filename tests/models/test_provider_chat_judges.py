"""A judge panel of DeepSeek models graded through the DeepSeek fake: the judges' calls meet DeepSeek's rules."""

from __future__ import annotations

import json

import pytest

from tests.helpers.providers.chat_completions import ChatCompletionsProvider, chat_reply
from tests.helpers.providers.chat_rules import DEEPSEEK

OPEN_TASK = {
    "id": "open",
    "domain": "mini",
    "question": "How did the units change from 2020 to 2021?",
    "grader": "judge",
    "answer": "Units fell from 40 to 2.",
    "type": "open_ended",
    "solution": "echo 'They dropped from 40 units to 2 units'",
}


@pytest.fixture
def deepseek(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-conformance")
    fake = ChatCompletionsProvider(DEEPSEEK)
    fake.start()
    yield fake
    fake.stop()


def test_a_panel_of_deepseek_judges_grades_through_the_deepseek_fake(mini, deepseek):
    (mini.tasks_dir / "mini.jsonl").write_text(json.dumps(OPEN_TASK) + "\n")
    verdict = json.dumps({"verdict": "CORRECT", "reason": "same facts"})
    deepseek.respond = lambda request: chat_reply(verdict, "Both say 40 then 2.")
    judges = ("--judge", "deepseek-v4-flash,deepseek-v4-pro", "--judge-api-base", deepseek.base_url)
    outcome = mini.run("--model", "oracle", *judges)
    assert outcome.exit_code == 0, outcome.output
    [row] = outcome.rows
    assert row["verdict"] == "correct"
    assert sorted(request["model"] for request in deepseek.requests) == ["deepseek-v4-flash", "deepseek-v4-pro"]
    assert deepseek.broken == []
