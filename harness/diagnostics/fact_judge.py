"""Which of a task's intermediate facts an episode *stated*: per fact row, a judge of the panel reads the
question, the row's cells and the agent's own record of the row's document (fact_record.py) and names the
cells the record supports (MuDABench's per-document diagnostic).

Each row is asked of the panel's first judge, the next one when a judge fails or replies malformed; a valid
reply is cached under the model, the prompt's digest and everything the prompt holds, so asking again costs
nothing. A row whose document the agent never named is unsupported without a call. A row no judge answered
makes the episode's judgment `judge_error` (no counts).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.core.facts import FactRow
from harness.diagnostics.fact_prompt import PROMPT_DIGEST, cells_json, fact_prompt, parse_supported
from harness.diagnostics.fact_record import document_record
from harness.grading.judge import JudgeCallFailed, JudgePanel
from harness.grading.judge_cache import cache_key
from harness.records.events import Event
from harness.records.fact_counts import FactCounts, count_covered

PARAMS: dict[str, Any] = {"temperature": 0.0}


@dataclass
class _FactJudgment:
    """The judges' answer for one episode."""

    counts: FactCounts | None
    """None when a row got no valid reply (judge_error)."""
    rows: list[dict[str, Any]] = field(default_factory=list)
    """Per fact row: document, supported columns (None on failure), and each judge asked."""
    cost_usd: float | None = None
    made: int = 0
    cached: int = 0


def judge_facts(
    panel: JudgePanel, question: str, facts: Sequence[FactRow], events: Sequence[Event], final_reply: str | None
) -> _FactJudgment:
    judgment = _FactJudgment(None)
    costs: list[float] = []
    for row in facts:
        record = document_record(events, row.document, final_reply)
        supported: list[str] | None = [] if not record else None
        asked: list[dict[str, Any]] = []
        for model in panel.models if record else []:
            reply = _ask(panel, model, question, row, record)
            asked.append(reply)
            judgment.made += not reply["cached"] and reply.get("failure") != "JUDGE_CALL_FAILED"
            judgment.cached += reply["cached"]
            if reply["cost_usd"] is not None and not reply["cached"]:
                costs.append(reply["cost_usd"])
            if reply["supported"] is not None:
                supported = reply["supported"]
                break
        judgment.rows.append({"document": row.document, "supported": supported, "judges": asked})
    judgment.cost_usd = round(sum(costs), 8) if costs else None
    if all(row["supported"] is not None for row in judgment.rows):
        judgment.counts = count_covered(
            [
                {name: name in row_judged["supported"] for name in row.cells}
                for row, row_judged in zip(facts, judgment.rows, strict=True)
            ]
        )
    return judgment


def _ask(panel: JudgePanel, model: str, question: str, row: FactRow, record: str) -> dict[str, Any]:
    gold = json.dumps([row.document, row.entity, row.period, cells_json(row)], ensure_ascii=False)
    key = cache_key(model, PROMPT_DIGEST, PARAMS, question, gold, record)
    event: dict[str, Any] = {"model": model, "cache_key": key, "input_tokens": 0, "output_tokens": 0, "cost_usd": None}
    hit = panel.cache.get(key)
    if hit is not None and isinstance(hit.get("supported"), list):
        return event | {"cached": True, "supported": hit["supported"], "failure": None}
    messages = [{"role": "user", "content": fact_prompt(question, row, record)}]
    try:
        reply, _ = panel.complete_at(model, messages, PARAMS["temperature"])
    except JudgeCallFailed as error:
        return event | {"cached": False, "supported": None, "failure": "JUDGE_CALL_FAILED", "error": str(error)}
    supported = parse_supported(reply.text, row)
    if supported is not None:
        with contextlib.suppress(OSError):  # a cache that cannot be written costs a call later, never a judgment
            panel.cache.put(key, {"model": model, "supported": supported, "reply": reply.text})
    return event | {
        "cached": False,
        "supported": supported,
        "failure": None if supported is not None else "JUDGE_MALFORMED",
        "reply": reply.text if supported is None else None,
        "input_tokens": reply.input_tokens,
        "output_tokens": reply.output_tokens,
        "cost_usd": reply.cost_usd,
    }
