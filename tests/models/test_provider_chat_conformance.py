"""The published chat-completions aliases (DeepSeek, GLM on Z.ai, Qwen3.5 on SGLang) through the real command
line against fakes that apply their providers' rules: 60 turns, a kill and resume, a replay and a regrade."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from tests.helpers.providers.chat_completions import ChatCompletionsProvider
from tests.helpers.providers.chat_conformance import (
    HOLD_TURN,
    NO_CALL_TURN,
    PARALLEL_TURN,
    RATE_LIMITED_TURN,
    SERVER_ERROR_TURN,
    TURNS,
    LongEpisode,
    calls_at,
    events,
    harness_command,
    kill_at_hold,
    reasoning_sent_back,
    result_row,
    run_harness,
)
from tests.helpers.providers.chat_rules import DEEPSEEK, SGLANG, ZAI, Provider

ALIASES = {
    "deepseek-v4-flash": DEEPSEEK,
    "deepseek-v4-pro": DEEPSEEK,
    "deepseek-v4": DEEPSEEK,
    "glm-5.1": ZAI,
    "qwen3.5-35b-a3b": SGLANG,
    "qwen3.5-9b": SGLANG,
}


def serve(provider: Provider) -> Iterator[ChatCompletionsProvider]:
    fake = ChatCompletionsProvider(provider)
    fake.start()
    yield fake
    fake.stop()


@pytest.fixture(params=sorted(ALIASES))
def alias(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def fake(alias: str) -> Iterator[ChatCompletionsProvider]:
    yield from serve(ALIASES[alias])


def test_sixty_turn_episode_killed_resumed_replayed_and_regraded_breaks_no_provider_rule(alias, fake, tmp_path):
    episode = LongEpisode(fake, tool_call_in_text=fake.provider is SGLANG)
    fake.respond = episode
    command = harness_command(alias, fake, tmp_path, "conformance")
    kill_at_hold(command, episode)
    resumed = run_harness(command, fake)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    run_dir = tmp_path / "conformance"
    row = result_row(run_dir)
    assert (row["status"], row["verdict"], row["turns"]) == ("answered", "correct", TURNS)
    logged = events(run_dir)
    format_errors = [event["turn"] for event in logged if event["event"] == "format_error"]
    assert format_errors == [PARALLEL_TURN, NO_CALL_TURN]
    retried = {
        event["turn"]: [attempt["status"] for attempt in event["response"]["attempts"]]
        for event in logged
        if event["event"] == "model_call" and event["response"]["attempts"]
    }
    assert calls_at(fake, RATE_LIMITED_TURN) == calls_at(fake, SERVER_ERROR_TURN) == 2
    if fake.provider is not ZAI:  # litellm's OpenAI client retries Z.ai's errors itself, unseen by our records
        assert retried == {RATE_LIMITED_TURN: [429], SERVER_ERROR_TURN: [500]}
    assert len(fake.requests) >= TURNS + HOLD_TURN  # the killed run's calls and the resumed run's
    assert fake.broken == []
    assert reasoning_sent_back(fake, episode) == []
    before = len(fake.requests)
    replayed = run_harness([sys.executable, "-m", "harness", "replay", str(run_dir)], fake)
    assert replayed.returncode == 0, replayed.stdout[-2000:] + replayed.stderr[-2000:]
    regraded = run_harness([sys.executable, "-m", "harness", "replay", "--regrade", str(run_dir)], fake)
    assert regraded.returncode == 0, regraded.stderr[-2000:]
    assert '"verdict": "correct"' in (run_dir / "results.regraded.jsonl").read_text()
    assert len(fake.requests) == before  # replay and regrade read the log: no provider call
