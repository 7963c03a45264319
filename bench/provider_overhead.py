"""Per-call overhead of our provider path at turn 1 and turn 150 of a long conversation.

Run: python bench/provider_overhead.py [CALLS]   (default 20 calls per turn measured)
A real episode's conversation (system, question, then per turn the model's bash tool call and a 1.5 KB
observation) is sent through `LiteLLMModel.query` (litellm builds the request, our retries and the provider's
gate around it) to a loopback OpenAI-compatible server that answers at once; beside it, the two other parts
of a turn that grow with the conversation: the context budget's token count (`Budget.estimate_prompt_tokens`,
exact up to the last reply, counting only what came after) and the `model_call` record (`compact_messages`
and the event line written). Figures are medians in ms; "growth" is turn 150's over turn 1's, to hold against
the conversation's own growth (what the provider must be sent anyway).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("OPENAI_API_KEY", "sk-bench")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from harness.core.reply import Usage
from harness.episode.budget import Budget
from harness.models.base import action_reply
from harness.models.litellm_model import LiteLLMModel, ProviderSettings
from harness.records.compact import ShownText, compact_messages
from harness.records.events import ModelCallEvent
from harness.records.trajectory import TrajectoryWriter
from tests.helpers.openai_server import ScriptedOpenAIServer, reply

OBSERVATION = ("| 2020 | 40 | units sold in the northern region, audited |\n" * 30)[:1500]
TURNS = (1, 150)


def conversation(turns: int) -> list[dict]:
    """The messages of the call at turn TURNS: system, question, and TURNS - 1 tool calls with their outputs."""
    messages = [
        {"role": "system", "content": "You answer questions from the documents. " * 40},
        {"role": "user", "content": "How many units were sold in 2020 and 2021 together?"},
    ]
    for turn in range(1, turns):
        answer = action_reply("Looking.", f"rg -n 'units' documents/ledger-{turn}.md", "toolcall", f"call_{turn}")
        messages.append(answer.to_message())
        messages.append({"role": "tool", "tool_call_id": f"call_{turn}", "content": OBSERVATION})
    return messages


def median_ms(action: Callable[[], object], calls: int) -> float:
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return 1000 * statistics.median(times)


def measure(model: LiteLLMModel, log: TrajectoryWriter, turns: int, calls: int) -> dict[str, float]:
    """The parts' medians at the call of turn TURNS."""
    messages = conversation(turns)
    budget = Budget(200, 3600, 128_000, 4096, count_tokens=model.count_tokens)
    # the last reply's usage counts the conversation up to it: only the observation after it is counted
    budget.record_call(messages[:-2], Usage(input_tokens=1000 * turns, output_tokens=50), None)
    shown = ShownText("observation", turns - 1, OBSERVATION)
    answer = model.query(messages, timeout_s=60)

    def record() -> None:
        event = ModelCallEvent(
            turn=turns,
            messages=compact_messages(messages[-2:], shown),
            response=answer.to_dict(),
            latency_s=0.001,
            model_id=answer.model_id,
        )
        log.write(event)

    return {
        "conversation KB": len(json.dumps(messages)) / 1024,
        "query (request, litellm, HTTP, reply)": median_ms(lambda: model.query(messages, 60), calls),
        "token count (budget)": median_ms(lambda: budget.estimate_prompt_tokens(messages), calls),
        "token count (whole conversation)": median_ms(lambda: model.count_tokens(messages), max(calls // 4, 3)),
        "record (compact + event line)": median_ms(record, calls),
    }


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    server = ScriptedOpenAIServer()
    server.respond = lambda request: reply(bash="rg -n units documents/ledger.md")
    server.start()
    settings = ProviderSettings("openai/gpt-4o", api_base=server.url, max_in_flight=8)
    model = LiteLLMModel(settings, context_window=128_000)
    model.query(conversation(1), timeout_s=60)  # litellm's first-call set-up is not a turn's
    with tempfile.TemporaryDirectory() as folder:
        log = TrajectoryWriter(Path(folder) / "episode.jsonl")
        first, last = (measure(model, log, turns, calls) for turns in TURNS)
        log.close()
    server.stop()
    print(f"median of {calls} calls; loopback server answering at once")
    print(f"| part | turn {TURNS[0]} | turn {TURNS[1]} | growth |")
    print("|---|---|---|---|")
    for name in first:
        unit = "" if name == "conversation KB" else " ms"
        print(f"| {name} | {first[name]:.2f}{unit} | {last[name]:.2f}{unit} | {last[name] / first[name]:.1f}x |")


if __name__ == "__main__":
    main()
