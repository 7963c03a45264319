"""One episode, and one run's header, as the viewer shows them (plain data, sent to the page as JSON)."""

from __future__ import annotations

from typing import Any

from harness.analysis.agent_transcript import transcript_view
from harness.analysis.runs import run_key
from harness.analysis.summary import ALL, Cell
from harness.core.images import EXTENSIONS, ImageRef
from harness.records.events import (
    ActionEvent,
    AgentTranscriptEvent,
    EpisodeEndEvent,
    EpisodeStartEvent,
    Event,
    EvidenceEvent,
    FormatErrorEvent,
    ImageViewEvent,
    ModelCallEvent,
    ObservationEvent,
)
from harness.records.image_store import is_image_hash, logged_refs
from harness.records.reading import LoggedEvent, is_finished
from harness.records.results import MODE_FIELDS
from harness.records.run_folder import RunFolder
from harness.records.run_record import RunRecord

_OUTCOME = ("status", "verdict", "answer", "turns", "detail", "reasons", "failure_mode", "evidence_recall", "row")


def episode_view(events: list[LoggedEvent], max_turns: float, time_limit: float) -> dict[str, Any] | None:
    """Its outcome and its steps: reply, command, output, budgets left, and the turn's model and command time;
    an installed agent's own transcript (`transcript`, agent_transcript.py); None for a log that does not start as
    an episode does."""
    start = events[0].event if events else None
    if not isinstance(start, EpisodeStartEvent):
        return None
    began = events[0].time or 0.0
    steps: list[dict[str, Any]] = []
    transcript: dict[str, Any] | None = None
    for logged in events:
        event, seconds_left = logged.event, round(time_limit - ((logged.time or 0.0) - began))
        if isinstance(event, ModelCallEvent):
            steps.append(
                {
                    "turn": event.turn,
                    "text": event.response.text,
                    "model_s": event.latency_s,
                    "turns_left": max_turns - event.turn,
                    "seconds_left": seconds_left,
                }
                | _prompt_images(event)
            )
        elif isinstance(event, ActionEvent) and steps:
            steps[-1]["command"] = event.command
        elif isinstance(event, ObservationEvent) and steps:
            steps[-1] |= {key: getattr(event, key) for key in ("stdout", "stderr", "exit_code", "timed_out")}
            steps[-1]["command_s"] = event.duration_s
            steps[-1]["seconds_left"] = seconds_left
        elif isinstance(event, ImageViewEvent) and steps:
            steps[-1]["image"] = _image_view(event)
        elif isinstance(event, FormatErrorEvent) and steps:
            steps[-1]["problem"] = event.problem
        elif isinstance(event, AgentTranscriptEvent):
            transcript = transcript_view(event).to_dict()
    evidence = next((logged.event for logged in events if isinstance(logged.event, EvidenceEvent)), None)
    facts = _facts(start.task.facts or [], evidence)
    return ({"facts": facts} if facts else {}) | {
        "key": f"{start.domain}/{start.task_id}",
        "domain": start.domain,
        "task_id": start.task_id,
        "question": start.task.question or "",
        "gold": start.task.answer,
        **_outcome(events[-1].event if is_finished(events) else None, len(steps)),
        "evidence": evidence.evidence if evidence else [],
        "touches": [touch.model_dump() for touch in evidence.touches] if evidence else [],
        "evidence_method": evidence.method if evidence else None,
        "model_s": round(sum(step.get("model_s") or 0 for step in steps), 3),
        "command_s": round(sum(step.get("command_s") or 0 for step in steps), 3),
        "steps": steps,
        "transcript": transcript,
    }


def _image_view(event: ImageViewEvent) -> dict[str, Any]:
    """What the agent asked to see and was shown: `src` the image's address beside the page (`images/<sha256>.<ext>`,
    only for a well-formed reference), or the problem that refused it."""
    ref = event.image
    view: dict[str, Any] = {"path": event.path, "problem": event.problem, "src": None}
    if ref is not None and is_image_hash(ref.sha256) and ref.media_type in EXTENSIONS:
        view |= {"src": image_address(ref), "width": ref.width, "height": ref.height, "bytes": ref.bytes}
    return view


def _prompt_images(event: ModelCallEvent) -> dict[str, Any]:
    """The images the call's new messages carried (a `--zero-shot` prompt's pages or charts), as image views."""
    refs = [ref for message in event.messages for ref in logged_refs(message)]
    views = [
        {"label": "in the prompt", "path": f"image {number}", "problem": None, "src": image_address(ref)}
        | {"width": ref.width, "height": ref.height, "bytes": ref.bytes}
        for number, ref in enumerate(refs, start=1)
        if ref.media_type in EXTENSIONS
    ]
    return {"prompt_images": views} if views else {}


def image_address(ref: ImageRef) -> str:
    """An image's address relative to the viewer's page, served (viewer_server.py) or written (viewer.py)."""
    return f"images/{ref.sha256}.{EXTENSIONS[ref.media_type]}"


def _facts(rows: list[dict[str, Any]], evidence: EvidenceEvent | None) -> list[dict[str, Any]]:
    """The task's fact rows, each cell marked seen and stated (None where the episode's record has no such mark)."""
    seen = evidence.facts_seen if evidence is not None else None
    stated = evidence.facts_stated if evidence is not None else None

    def mark(marks: list[Any] | None, index: int, name: str) -> bool | None:
        if marks is None or index >= len(marks) or marks[index] is None:
            return None
        return name in marks[index]

    return [
        {
            "document": row.get("document"),
            "entity": row.get("entity"),
            "period": row.get("period"),
            "cells": [
                {"name": name, "value": value, "seen": mark(seen, index, name), "stated": mark(stated, index, name)}
                for name, value in (row.get("cells") or {}).items()
            ],
        }
        for index, row in enumerate(rows)
    ]


def _outcome(end: Event | None, steps: int) -> dict[str, Any]:
    """What the row says of the episode; an unfinished one has no row."""
    if not isinstance(end, EpisodeEndEvent):
        outcome: dict[str, Any] = dict.fromkeys(_OUTCOME) | {"status": "unfinished", "verdict": "none"}
        return outcome | {"turns": steps, "reasons": []}
    row = end.row
    return {
        "status": row.status.value,
        "verdict": row.verdict.value,
        "answer": row.answer,
        "turns": row.turns,
        "detail": row.detail,
        "reasons": row.reasons or [],
        "failure_mode": row.failure_mode,
        "evidence_recall": row.evidence_recall,
        "row": row.to_dict(),  # every field, as results.jsonl has it: a field added to the row shows with no list
    }


def run_header(folder: RunFolder, record: RunRecord) -> dict[str, Any]:
    """Model, label, protocol, accuracy by grading mode, tokens and cost of the run's (RECORD's) latest rows."""
    rows = list(folder.latest_rows().values())
    model = str(record.config.model)
    cell = Cell(model, ALL, rows)
    costs = cell.cost()
    return {
        "model": model,
        "label": run_key(record),
        "protocol": {key: value for key, value in record.protocol.model_dump().items() if not isinstance(value, dict)},
        "episodes": cell.n,
        "accuracy": {mode: round(100 * cell.accuracy(mode), 1) for mode in MODE_FIELDS},
        "input_tokens": cell.input_tokens(),
        "output_tokens": cell.output_tokens(),
        "cost_usd": None if costs is None else round(costs, 4),
    }
