"""Asking the judge panel which failure modes a wrong episode shows (multi-label, with evidence turns).

Each judge is asked through the panel's completion and cache (grading/judge.py's): a valid reply is cached
under the model, the prompt's digest, the parameters and everything the prompt holds, so asking again costs
nothing. A mode is labelled when more than half of the judges with a valid reply name it; fewer valid
replies than the panel's quorum is `judge_error` for that episode alone.
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass
from typing import Any

from harness.diagnostics.mode_prompt import PROMPT_DIGEST, mode_prompt, parse_labels
from harness.grading.judge import JudgeCallFailed, JudgePanel
from harness.grading.judge_cache import cache_key

PARAMS: dict[str, Any] = {"temperature": 0.0}


@dataclass(frozen=True)
class EpisodeCase:
    """What the judges are shown of one wrong episode."""

    question: str
    reference: str
    outcome: str
    """How it ended: status, verdict, the answer given, turns used."""
    trajectory: str
    """The condensed trajectory (diagnostics/condensed.py)."""
    turns: int


@dataclass(frozen=True)
class _PanelLabels:
    """The panel's answer for one episode."""

    modes: dict[str, int] | None
    """Mode -> evidence turn; None when fewer judges than the quorum replied validly (judge_error)."""
    judges: list[dict[str, Any]]
    cost_usd: float | None
    made: int
    cached: int


def label_episode(panel: JudgePanel, case: EpisodeCase) -> _PanelLabels:
    replies = [_ask(panel, model, case) for model in panel.models]
    valid = [reply["labels"] for reply in replies if reply["labels"] is not None]
    costs = [r["cost_usd"] for r in replies if r["cost_usd"] is not None and not r["cached"]]
    made = sum(not r["cached"] and r.get("failure") != "JUDGE_CALL_FAILED" for r in replies)
    cached = sum(r["cached"] for r in replies)
    cost = round(sum(costs), 8) if costs else None
    if len(valid) < panel.quorum:
        return _PanelLabels(None, replies, cost, made, cached)
    modes: dict[str, int] = {}
    for mode in {label["mode"] for labels in valid for label in labels}:
        turns = [label["turn"] for labels in valid for label in labels if label["mode"] == mode]
        if 2 * len(turns) > len(valid):
            modes[mode] = min(turns)
    return _PanelLabels(dict(sorted(modes.items())), replies, cost, made, cached)


def _ask(panel: JudgePanel, model: str, case: EpisodeCase) -> dict[str, Any]:
    key = cache_key(model, PROMPT_DIGEST, PARAMS, case.question, case.reference, f"{case.outcome}\n{case.trajectory}")
    event: dict[str, Any] = {"model": model, "cache_key": key, "input_tokens": 0, "output_tokens": 0, "cost_usd": None}
    hit = panel.cache.get(key)
    if hit is not None and isinstance(hit.get("labels"), list):
        return event | {"cached": True, "labels": hit["labels"], "failure": None}
    messages = [{"role": "user", "content": mode_prompt(case.question, case.reference, case.outcome, case.trajectory)}]
    try:
        reply, _ = panel.complete_at(model, messages, PARAMS["temperature"])
    except JudgeCallFailed as error:
        return event | {"cached": False, "labels": None, "failure": "JUDGE_CALL_FAILED", "error": str(error)}
    parsed = parse_labels(reply.text, case.turns)
    labels = None if parsed is None else [dataclasses.asdict(label) for label in parsed]
    if labels is not None:
        with contextlib.suppress(OSError):  # a cache that cannot be written costs a call later, never a label
            panel.cache.put(key, {"model": model, "labels": labels, "reply": reply.text})
    return event | {
        "cached": False,
        "labels": labels,
        "failure": None if labels else "JUDGE_MALFORMED",
        "reply": reply.text if labels is None else None,
        "input_tokens": reply.input_tokens,
        "output_tokens": reply.output_tokens,
        "cost_usd": reply.cost_usd,
    }
