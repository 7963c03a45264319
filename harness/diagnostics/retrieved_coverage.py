"""How much of a task's gold facts in words (MuDABench's `source_answer`) the chunks a solver retrieved hold: the
RAG baseline's process accuracy as MuDABench judges it (paper eq. 3-5, `eval/evaluate.py --eval-mode rag`).

Two judges read the same chunks against the same list: the correct side counts the facts found, the incorrect
side (the double check) the facts wrong or missing; the conservative count is min(correct, total - errors),
both clamped to [0, total] (records/fact_counts.py). The prompts are MuDABench's own
(grading/protocols/coverage/mudabench-rag.yaml), each side asked of the panel's first judge (the next one when
it fails), five attempts as MuDABench's rescue; a side no judge answered counts as MuDABench counts it (none
found; every fact an error) and is counted as failed. The total is the list's length (MuDABench's code takes the
correct side's echo of it when the reply gives one). A reply is read leniently, passing over any verdict-shaped
JSON the chunks themselves hold (a document cannot vote). Each call is a `judge_call` event; replies are cached.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.core.yaml_safe import load_yaml
from harness.grading.judge import JudgeCallFailed, JudgePanel
from harness.grading.judge_cache import cache_key
from harness.grading.judge_protocol import PACKAGED
from harness.grading.lenient_json import lenient_object
from harness.records.events import Event, RetrievalEvent
from harness.records.fact_counts import RetrievedCoverage, conservative_coverage

PROMPTS_FILE = PACKAGED / "coverage" / "mudabench-rag.yaml"
CHUNK_SEPARATOR = "\n<next_chunk>\n"
_EMPTY = "(empty retrieved chunks)"
_PARAMS: dict[str, Any] = {"temperature": 0.0}
_SIDES = {"correct_side": "correct_extractions", "incorrect_side": "error_extractions"}


@dataclass
class CoverageJudgment:
    coverage: RetrievedCoverage
    calls: list[dict[str, Any]] = field(default_factory=list)
    """The `judge_call` events' fields, one per call or cache hit."""
    cost_usd: float | None = None


def retrieved_chunks(events: Sequence[Event]) -> list[str] | None:
    """The texts of every chunk the episode retrieved from its whole collection, in order; None when it made no
    such search (no retrieval, or only one document's at a time, as the workflow's)."""
    searches = [event for event in events if isinstance(event, RetrievalEvent) and event.document is None]
    return [chunk.text for event in searches for chunk in event.chunks] if searches else None


def judge_retrieved_coverage(panel: JudgePanel, source_answer: list[str], chunks: list[str]) -> CoverageJudgment:
    """Both sides asked about CHUNKS against SOURCE_ANSWER, and their conservative count."""
    prompts = load_yaml(PROMPTS_FILE.read_text(encoding="utf-8"), PROMPTS_FILE)
    info = CHUNK_SEPARATOR.join(chunks) or _EMPTY
    total = len(source_answer)
    found: dict[str, int | None] = {}
    calls: list[dict[str, Any]] = []
    for side, field_name in _SIDES.items():
        prompt = (
            prompts[side]
            .replace("{len_source}", str(total))
            .replace("{source_answer}", str(source_answer))
            .replace("{info}", info)
            .replace("{{", "{")
            .replace("}}", "}")
        )
        messages = [{"role": "system", "content": prompts["system"]}, {"role": "user", "content": prompt}]
        found[side] = _ask(panel, messages, field_name, info, int(prompts["attempts"]), calls.append)
    correct, errors = found["correct_side"], found["incorrect_side"]
    failed = sum(value is None for value in found.values())
    coverage = conservative_coverage(
        0 if correct is None else correct, total if errors is None else errors, total, failed
    )
    costs = [call["cost_usd"] for call in calls if call["cost_usd"] is not None and not call["cached"]]
    return CoverageJudgment(coverage, calls, round(sum(costs), 8) if costs else None)


def _ask(
    panel: JudgePanel,
    messages: list[dict[str, str]],
    field_name: str,
    info: str,
    attempts: int,
    record: Callable[[dict[str, Any]], None],
) -> int | None:
    prompt = messages[-1]["content"]
    digest = "sha256:" + hashlib.sha256(prompt.encode()).hexdigest()[:16]
    for model in panel.models:
        key = cache_key(model, digest, _PARAMS, field_name, "", "")
        event: dict[str, Any] = {"model": model, "prompt": prompt, "params": _PARAMS, "cache_key": key}
        hit = panel.cache.get(key)
        if hit is not None and isinstance(hit.get(field_name), int):
            record(event | _fields(True, str(hit[field_name]), hit.get("reply"), None, None, 0, 0, None, 0.0))
            return int(hit[field_name])
        for _ in range(attempts):
            started = time.monotonic()
            try:
                reply, dropped = panel.complete_at(model, messages, _PARAMS["temperature"], "json_object")
            except JudgeCallFailed as error:
                latency = round(time.monotonic() - started, 3)
                record(event | _fields(False, None, None, "JUDGE_CALL_FAILED", str(error), 0, 0, None, latency))
                break
            latency = round(time.monotonic() - started, 3)
            count = _count(lenient_object(reply.text, info), field_name)
            failure = None if count is not None else "JUDGE_MALFORMED"
            record(
                event
                | _fields(
                    False,
                    None if count is None else str(count),
                    reply.text,
                    failure,
                    None,
                    reply.input_tokens,
                    reply.output_tokens,
                    reply.cost_usd,
                    latency,
                )
                | {"dropped_params": dropped}
            )
            if count is not None:
                with contextlib.suppress(OSError):  # a cache that cannot be written costs a call later, never a count
                    panel.cache.put(key, {"model": model, field_name: count, "reply": reply.text})
                return count
    return None


def _count(parsed: dict[str, Any] | None, field_name: str) -> int | None:
    """The reply's count, read as MuDABench's `_to_int` reads it (a number or a numeric string); None without one."""
    value = None if parsed is None else parsed.get(field_name)
    if isinstance(value, bool) or value is None:
        return None
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return None


def _fields(
    cached: bool,
    verdict: str | None,
    reply: str | None,
    failure: str | None,
    error: str | None,
    input_tokens: int,
    output_tokens: int,
    cost_usd: float | None,
    latency_s: float,
) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "cached": cached,
        "verdict": verdict,
        "reply": reply,
        "dropped_params": [],
        "failure": failure,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cost_usd": cost_usd,
        "latency_s": latency_s,
    }
    return fields | ({"error": error} if error else {})
