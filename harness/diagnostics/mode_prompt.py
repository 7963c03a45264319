"""The failure-mode judge's prompt (versioned; its digest is recorded with every label) and its strict
parser. The five definitions are docs/FAILURE_MODES.md's, word for word."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from harness.diagnostics.failure_modes import PAPER_MODES
from harness.grading.judge_prompt import fill, strict_json

PROMPT_VERSION = "failure-modes-1.0"
DEFINITIONS = {
    "incomplete_inspection": "The agent did not inspect every document, table or passage the answer needs: it "
    "stopped searching early, looked at too few files or skipped part of the evidence.",
    "evidence_misidentification": "The agent read the relevant material but took the wrong value from it: the "
    "wrong document, row, column, period, entity or unit.",
    "resource_exhaustion": "The agent ran out of turns, time or context before it could answer, or spent them "
    "on repeated or unproductive commands so that the answer was forced or missing.",
    "instruction_non_following": "The agent ignored what the question or the protocol asked: the answer format, "
    "the rounding, the unit, the sign, the quantity asked for, or the one-command-per-turn rule.",
    "hallucination": "The agent stated a figure, document or fact that no observation in the trajectory "
    "supports, or computed from numbers it never saw.",
}
"""Mode -> its definition, in PAPER_MODES order."""
TEMPLATE = """You label why an AI agent answered a document-reasoning question wrongly. The agent had only a bash
tool over a read-only collection of Markdown files. Below are the question, the reference answer, how the
episode ended, and the agent's trajectory (commands in full; long outputs cut, with their size said).

Failure modes (one or more may apply):
<<DEFINITIONS>>

Question:
<<QUESTION>>

Reference answer:
<<REFERENCE>>

How the episode ended: <<OUTCOME>>

Trajectory:
<<TRAJECTORY>>

Reply with one JSON object and nothing else, listing every mode that applies (at least one), each with the
turn that shows it best:
{"labels": [{"mode": "<one of the mode names above>", "turn": <turn number>, "reason": "<one sentence>"}]}
"""
PROMPT_DIGEST = (
    "sha256:"
    + hashlib.sha256(f"{PROMPT_VERSION}\n{TEMPLATE}\n{json.dumps(DEFINITIONS, sort_keys=True)}".encode()).hexdigest()[
        :16
    ]
)


@dataclass(frozen=True)
class _ModeLabel:
    """One failure mode a judge found, with the turn it points to."""

    mode: str
    turn: int
    reason: str


def mode_prompt(question: str, reference: str, outcome: str, trajectory: str) -> str:
    """The prompt; placeholders replaced in one pass, so a trajectory that holds `<<REFERENCE>>` pulls nothing in."""
    definitions = "\n".join(f"- {mode}: {text}" for mode, text in DEFINITIONS.items())
    values = {
        "<<DEFINITIONS>>": definitions,
        "<<QUESTION>>": question,
        "<<REFERENCE>>": reference,
        "<<OUTCOME>>": outcome,
        "<<TRAJECTORY>>": trajectory,
    }
    return fill(TEMPLATE, values)


def parse_labels(reply: str, turns: int) -> list[_ModeLabel] | None:
    """The labels of a strict JSON reply (one object, optionally in one ```json fence): at least one, each a
    known mode once, with a turn from 0 to TURNS; None for anything else."""
    data = strict_json(reply)
    items = data.get("labels") if isinstance(data, dict) else None
    if not isinstance(items, list) or not items:
        return None
    labels: list[_ModeLabel] = []
    for item in items:
        if not isinstance(item, dict):
            return None
        mode, turn, reason = item.get("mode"), item.get("turn"), item.get("reason", "")
        valid_turn = isinstance(turn, int) and not isinstance(turn, bool) and 0 <= turn <= turns
        if mode not in PAPER_MODES or not valid_turn or not isinstance(reason, str):
            return None
        if any(label.mode == mode for label in labels):
            return None
        labels.append(_ModeLabel(str(mode), int(turn or 0), reason))
    return labels
