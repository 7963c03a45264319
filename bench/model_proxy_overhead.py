"""Prints what the model proxy adds to one model call of an installed agent: the time of a call through the unix
socket (HTTP, JSON both ways, the query step, the event written) against the same query step called in process,
for a model that answers at once, in OpenAI's, Anthropic's and Gemini's API.

Run: python bench/model_proxy_overhead.py [CALLS]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from harness.episode.budget import Budget
from harness.episode.proxy import ModelProxy
from harness.episode.query import query_model
from harness.episode.solvers.tools import BashTool
from harness.models.base import ModelReply, action_reply, estimate_tokens
from harness.records.trajectory import TrajectoryWriter

CONVERSATION = [{"role": "system", "content": "You answer."}, {"role": "user", "content": "How many? " * 200}]


class InstantModel:
    name = "instant"
    context_window = None

    def count_tokens(self, messages: list[dict[str, Any]]) -> int:
        return estimate_tokens(messages)

    def query(self, messages: list[dict[str, Any]], timeout_s: float) -> ModelReply:
        return action_reply("Looking.", "ls", "toolcall", "call_1")


def budget(calls: int) -> Budget:
    return Budget(max_turns=calls + 1, time_limit_s=3600, context_window=None, output_reserve=0)


def in_process(calls: int, folder: Path) -> float:
    log, spent = TrajectoryWriter(folder / "direct.jsonl"), budget(calls)
    started = time.perf_counter()
    for _ in range(calls):
        query_model(InstantModel(), CONVERSATION, spent, log, CONVERSATION)
    return (time.perf_counter() - started) / calls


def through_proxy(calls: int, folder: Path, path: str, body: dict[str, Any]) -> float:
    name = path.strip("/").replace("/", "-")
    socket, log = folder / f"{name}.sock", TrajectoryWriter(folder / f"{name}.jsonl")
    transport = httpx.HTTPTransport(uds=str(socket))
    with (
        ModelProxy(socket, InstantModel(), budget(calls), log, [BashTool()]),
        httpx.Client(transport=transport, base_url="http://proxy") as client,
    ):
        started = time.perf_counter()
        for _ in range(calls):
            client.post(path, json=body).raise_for_status()
        return (time.perf_counter() - started) / calls


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        direct = in_process(calls, folder)
        chat = through_proxy(calls, folder, "/v1/chat/completions", {"messages": CONVERSATION})
        system, question = CONVERSATION[0]["content"], CONVERSATION[1:]
        messages = through_proxy(calls, folder, "/v1/messages", {"system": system, "messages": question})
        contents = [{"role": "user", "parts": [{"text": question[0]["content"]}]}]
        gemini_body = {"systemInstruction": {"parts": [{"text": system}]}, "contents": contents}
        gemini = through_proxy(calls, folder, "/v1beta/models/m:generateContent", gemini_body)
    print(f"{calls} calls of a model that answers at once (a {len(str(CONVERSATION))}-character conversation)")
    print(f"  query step in process:        {direct * 1000:7.2f} ms per call")
    print(f"  through the proxy, OpenAI:    {chat * 1000:7.2f} ms per call (+{(chat - direct) * 1000:.2f} ms)")
    print(f"  through the proxy, Anthropic: {messages * 1000:7.2f} ms per call (+{(messages - direct) * 1000:.2f} ms)")
    print(f"  through the proxy, Gemini:    {gemini * 1000:7.2f} ms per call (+{(gemini - direct) * 1000:.2f} ms)")


if __name__ == "__main__":
    main()
