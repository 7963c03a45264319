"""Which of a task's intermediate facts an episode *stated*: per fact row, a judge of the panel reads the
question, the row's cells and the agent's own record of the row's document (fact_record.py) and names the
cells the record supports (MuDABench's per-document diagnostic).

Every row is asked, as MuDABench asks about every row (`named_only` asks only about rows whose document some
command named or some output showed; the others are unsupported without a call, and the judgment says so).
Each row is asked of the panel's first judge, the next one when a judge fails or replies malformed (each judge
as many times as the protocol's `reading.attempts`), in the panel protocol's words (its `facts` template, else
ours: fact_prompt.py); a valid reply is cached under the model, the prompt's digest and everything the prompt
holds, so asking again costs nothing. A row no judge answered counts as not stated, as MuDABench counts it,
and is counted apart (`failed`): it stays in every denominator.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.core.facts import FactRow
from harness.diagnostics.fact_prompt import PROMPT_DIGEST, fact_prompt, parse_supported, prompt_values
from harness.diagnostics.fact_record import asks_per_document, document_record
from harness.diagnostics.fact_table import placeholders
from harness.grading.judge import JudgeCallFailed, JudgePanel
from harness.grading.judge_cache import cache_key
from harness.grading.judge_prompt import fenced, fill
from harness.grading.judge_protocol import JudgeProtocol
from harness.records.events import Event
from harness.records.fact_counts import FactCounts, count_covered

PARAMS: dict[str, Any] = {"temperature": 0.0}
_EMPTY_RECORD = "(empty conversation)"
"""A protocol's record of a document the agent never touched (MuDABench's words for an empty dialog)."""


@dataclass
class _FactJudgment:
    """The judges' answer for one episode."""

    counts: FactCounts
    rows: list[dict[str, Any]] = field(default_factory=list)
    """Per fact row: document, supported columns, whether its judgment failed, and each judge asked."""
    cost_usd: float | None = None
    made: int = 0
    cached: int = 0


def prompt_digest(protocol: JudgeProtocol) -> str:
    """The digest of the fact prompt a panel's protocol asks in."""
    return PROMPT_DIGEST if protocol.facts is None else protocol.facts.digest


def judge_facts(
    panel: JudgePanel,
    question: str,
    facts: Sequence[FactRow],
    events: Sequence[Event],
    final_reply: str | None,
    named_only: bool = False,
) -> _FactJudgment:
    rows: list[dict[str, Any]] = []
    costs: list[float] = []
    made = cached = 0
    per_document = asks_per_document(events)  # MuDABench's runner: a document never asked is an empty conversation
    for index, row in enumerate(facts):
        record = document_record(events, row.document, final_reply)
        if not record and not named_only and final_reply and not per_document:  # the judge still reads the reply
            record = f"## final reply\n{final_reply}"
        supported: list[str] | None = None
        asked: list[dict[str, Any]] = []
        for model in [] if named_only and not record else panel.models:
            reply = _ask(panel, model, question, index, row, record)
            asked.append(reply)
            made += reply["calls"]
            cached += reply["cached"]
            if reply["cost_usd"] is not None and not reply["cached"]:
                costs.append(reply["cost_usd"])
            if reply["supported"] is not None:
                supported = reply["supported"]
                break
        failed = bool(asked) and supported is None
        rows.append({"document": row.document, "supported": supported or [], "failed": failed, "judges": asked})
    covered = [
        {name: name in judged["supported"] for name in row.cells} for row, judged in zip(facts, rows, strict=True)
    ]
    counts = count_covered(covered, failed=sum(judged["failed"] for judged in rows))
    return _FactJudgment(counts, rows, round(sum(costs), 8) if costs else None, made, cached)


def _ask(panel: JudgePanel, model: str, question: str, index: int, row: FactRow, record: str) -> dict[str, Any]:
    protocol = panel.protocol
    digest = prompt_digest(protocol)
    gold = json.dumps([index, row.to_dict()], ensure_ascii=False, sort_keys=True)
    key = cache_key(model, digest, PARAMS, question, gold, record)
    event: dict[str, Any] = {"model": model, "cache_key": key, "input_tokens": 0, "output_tokens": 0, "cost_usd": None}
    hit = panel.cache.get(key)
    if hit is not None and isinstance(hit.get("supported"), list):
        return event | {"cached": True, "calls": 0, "supported": hit["supported"], "failure": None}
    messages = protocol.messages(_prompt(protocol, question, index, row, record))
    tried: list[dict[str, Any]] = []
    while len(tried) < protocol.attempts:
        tried.append(_call(panel, model, messages, row, record))
        if tried[-1]["supported"] is not None:
            break
    last = tried[-1]
    costs = [one["cost_usd"] for one in tried if one["cost_usd"] is not None]
    last |= {
        "calls": sum(one["failure"] != "JUDGE_CALL_FAILED" for one in tried),
        "cost_usd": round(sum(costs), 8) if costs else None,
        "input_tokens": sum(one["input_tokens"] for one in tried),
        "output_tokens": sum(one["output_tokens"] for one in tried),
    }
    if len(tried) > 1:
        last["earlier"] = [{"failure": one["failure"], "reply": one.get("reply")} for one in tried[:-1]]
    if last["supported"] is not None:
        with contextlib.suppress(OSError):  # a cache that cannot be written costs a call later, never a judgment
            panel.cache.put(key, {"model": model, "supported": last["supported"], "reply": last["reply"]})
    return event | last


def _call(panel: JudgePanel, model: str, messages: list[dict[str, str]], row: FactRow, record: str) -> dict[str, Any]:
    """One call and its reading; RECORD is the agent's text the judge was shown (never read as the reply)."""
    protocol = panel.protocol
    try:
        reply, _ = panel.complete_at(model, messages, PARAMS["temperature"], protocol.response_format)
    except JudgeCallFailed as error:
        failed = {"supported": None, "failure": "JUDGE_CALL_FAILED", "error": str(error), "reply": None}
        return failed | {"cached": False, "cost_usd": None, "input_tokens": 0, "output_tokens": 0}
    if protocol.facts is None and protocol.json_rule == "strict":
        supported = parse_supported(reply.text, row)
    else:
        supported = protocol.read_supported(reply.text, list(row.cells), record)
    return {
        "cached": False,
        "supported": supported,
        "failure": None if supported is not None else "JUDGE_MALFORMED",
        "reply": reply.text,
        "input_tokens": reply.input_tokens,
        "output_tokens": reply.output_tokens,
        "cost_usd": reply.cost_usd,
    }


def _prompt(protocol: JudgeProtocol, question: str, index: int, row: FactRow, record: str) -> str:
    if protocol.facts is None:
        return fact_prompt(question, row, record)
    shown = record or _EMPTY_RECORD
    values = prompt_values(question, row, fenced(shown) if protocol.answer_fence else shown)
    return fill(protocol.facts.template, values | placeholders(row, index))
