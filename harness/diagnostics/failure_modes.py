"""Failure modes of wrong episodes, from the status, the verdict and the evidence record (pure function).

The rule (stated under the report's chart): a turn, time, context or sandbox limit is Resource Exhaustion; else a
task evidence file never reached is Incomplete Inspection; else an answered episode that reached every
evidence file has Evidence Misidentification; anything else (format errors, tasks without an evidence
list) is unclassified: Instruction Non-Following and Hallucination need a judge. Correct episodes and
infrastructure failures (ours, retried on resume) get no failure mode.
"""

from __future__ import annotations

from harness.core.status import INTERRUPTED, Status

_RESOURCE_EXHAUSTION = "resource_exhaustion"
_INCOMPLETE_INSPECTION = "incomplete_inspection"
_EVIDENCE_MISIDENTIFICATION = "evidence_misidentification"
_UNCLASSIFIED = "unclassified"
MODES = (_INCOMPLETE_INSPECTION, _EVIDENCE_MISIDENTIFICATION, _RESOURCE_EXHAUSTION, _UNCLASSIFIED)
_INSTRUCTION_NON_FOLLOWING = "instruction_non_following"
_HALLUCINATION = "hallucination"
PAPER_MODES = (
    _INCOMPLETE_INSPECTION,
    _EVIDENCE_MISIDENTIFICATION,
    _RESOURCE_EXHAUSTION,
    _INSTRUCTION_NON_FOLLOWING,
    _HALLUCINATION,
)
"""The paper's five failure modes (docs/FAILURE_MODES.md); a wrong episode may carry several. The rule above
gives the first three; a judge (`annotate`) gives all five."""
RULE_MODES = (_INCOMPLETE_INSPECTION, _EVIDENCE_MISIDENTIFICATION, _RESOURCE_EXHAUSTION)
"""The modes both the rule and a judge give (their agreement is measured on these)."""
RULE = (
    "Rule: turn/time/context limit = resource exhaustion; else an evidence file never reached (named in a "
    "command or shown in an output) = incomplete inspection; else answered with every evidence file reached = "
    "evidence misidentification; else unclassified (instruction non-following and hallucination need a judge)."
)
_EXHAUSTED = frozenset(
    {Status.TURN_LIMIT, Status.TIME_LIMIT, Status.CONTEXT_LIMIT, Status.COST_LIMIT, Status.SANDBOX_LIMIT}
)


def failure_mode(status: Status, correct: bool, evidence_recall: float | None) -> str | None:
    if correct or status in INTERRUPTED:
        return None
    if status in _EXHAUSTED:
        return _RESOURCE_EXHAUSTION
    if evidence_recall is not None and evidence_recall < 1:
        return _INCOMPLETE_INSPECTION
    if evidence_recall is not None and status is Status.ANSWERED:
        return _EVIDENCE_MISIDENTIFICATION
    return _UNCLASSIFIED
