"""A 60-turn demo episode against a chat-completions provider fake, through the real command line.

The fake answers from the conversation it is sent (the turn is the number of assistant messages in it),
so a retried call, a killed run resumed or a replay all meet the same replies. Along the way: tool calls
with and without reasoning, a parallel call and a reply without any call (two format-error turns), a 429
and a 500 each retried once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conftest import REPO
from tests.helpers.openai_server import Step
from tests.helpers.providers.chat_completions import (
    ChatCompletionsProvider,
    chat_reply,
    qwen3_coder_text,
    refused,
    tool_call,
)

TASK_ID = "demo-001"
ANSWER = "<answer>38.145%</answer>"
TURNS = 60
PARALLEL_TURN = 15
NO_CALL_TURN = 30
RATE_LIMITED_TURN = 40
SERVER_ERROR_TURN = 50
HOLD_TURN = 12
"""The turn at which the fake holds its reply until released (the moment a test kills the run)."""


def turn_of(request: dict[str, Any]) -> int:
    return 1 + sum(1 for message in request["messages"] if message.get("role") == "assistant")


def reasoning_for(turn: int) -> str:
    """Even turns think nothing (DeepSeek's `"reasoning_content": ""` on a quick tool call)."""
    return "" if turn % 2 == 0 else f"Turn {turn}: the ledger rows come next."


@dataclass
class LongEpisode:
    """The conversation-driven replies of a 60-turn episode (the fake's `respond`)."""

    fake: ChatCompletionsProvider
    turns: int = TURNS
    """The turn that answers."""
    tool_call_in_text: bool = False
    """The model writes its call as Qwen3-Coder XML that the server's parser leaves in `content`."""
    faulted: set[int] = field(default_factory=set)
    sent_reasoning: dict[str, str] = field(default_factory=dict)
    """Reasoning sent with each tool call id."""
    reached_hold: threading.Event = field(default_factory=threading.Event)
    release: threading.Event | None = None
    """Set: the fake holds its reply at HOLD_TURN (once) until this is set."""

    def __call__(self, request: dict[str, Any]) -> Step:
        turn = turn_of(request)
        provider = self.fake.provider
        if turn == RATE_LIMITED_TURN and self._first_time(turn):
            return refused(provider.rate_limited, provider.rate_limit_headers)
        if turn == SERVER_ERROR_TURN and self._first_time(turn):
            return refused(provider.server_error)
        if turn == HOLD_TURN and self.release is not None and not self.reached_hold.is_set():
            self.reached_hold.set()
            self.release.wait(60)
        return self._reply(turn)

    def _first_time(self, turn: int) -> bool:
        first = turn not in self.faulted
        self.faulted.add(turn)
        return first

    def _reply(self, turn: int) -> Step:
        reasoning = reasoning_for(turn)
        if turn >= self.turns:
            return chat_reply(f"The growth is {ANSWER}", reasoning)
        if turn == NO_CALL_TURN:
            text = qwen3_coder_text("ls documents") if self.tool_call_in_text else "Let me think about it."
            return chat_reply(text, reasoning)
        commands = [f"echo turn {turn}"] if turn != PARALLEL_TURN else ["ls documents", "echo second call"]
        if turn % 10 == 1:
            commands = ["head -3 documents/statsmodels-macrodata_us-economy-quarterly-1970-1979.md"]
        calls = [tool_call(command) for command in commands]
        self.sent_reasoning.update({call["id"]: reasoning for call in calls})
        return chat_reply("", reasoning, calls)


def harness_command(alias: str, fake: ChatCompletionsProvider, results: Path, run_id: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "harness",
        "--model",
        alias,
        "--api-base",
        fake.base_url,
        "--domain",
        "demo",
        "--task-id",
        TASK_ID,
        "--results-dir",
        str(results),
        "--run-id",
        run_id,
        "--max-turns",
        str(TURNS),
    ]


def provider_environment(fake: ChatCompletionsProvider) -> dict[str, str]:
    return {**os.environ, fake.provider.key_variable: "sk-conformance"}


def run_harness(arguments: Sequence[str], fake: ChatCompletionsProvider) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        arguments, cwd=REPO, env=provider_environment(fake), capture_output=True, text=True, timeout=600
    )


def kill_at_hold(arguments: Sequence[str], episode: LongEpisode) -> None:
    """Start the run, SIGKILL it (its whole process group) while the fake holds turn HOLD_TURN's reply."""
    episode.release = threading.Event()
    process = subprocess.Popen(
        arguments,
        cwd=REPO,
        env=provider_environment(episode.fake),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        assert episode.reached_hold.wait(300), "the run never reached the turn to kill it at"
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(60)
    finally:
        episode.release.set()


def events(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / "episodes" / "demo" / f"{TASK_ID}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def result_row(run_dir: Path) -> dict[str, Any]:
    [row] = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    return row


def calls_at(fake: ChatCompletionsProvider, turn: int) -> int:
    """Requests the fake received for TURN (a retried call is two)."""
    return sum(1 for request in fake.requests if turn_of(request) == turn)


def reasoning_sent_back(fake: ChatCompletionsProvider, episode: LongEpisode) -> list[str]:
    """Tool calls whose reasoning came back different from what the fake sent with them (an empty one may
    come back as litellm's one-space placeholder, which DeepSeek's thinking mode accepts)."""
    wrong: list[str] = []
    for request in fake.requests:
        for message in request["messages"]:
            for call in message.get("tool_calls") or [] if message.get("role") == "assistant" else []:
                sent = episode.sent_reasoning.get(call["id"])
                back = message.get("reasoning_content")
                if sent is not None and back != sent and not (sent == "" and back == " "):
                    wrong.append(f"{call['id']}: sent {sent!r}, got {back!r}")
    return wrong
