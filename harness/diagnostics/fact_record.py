"""The agent's own record of one document, for the fact judge: every turn whose command names the document
(the model's prose of that turn, the command, its output cut to fit), the output lines of other commands that
show the document's content under its name (a `grep -r` hit `file:...`), and the agent's final reply.

A solver that asks about one document at a time (the workflow's per-document QA: a `retrieval` event naming the
document, then the model call answering it) has as its record those questions and answers, `Q: ...` / `A: ...`
in order, as MuDABench's released evaluator builds each document's conversation from its runner's log
(`eval/evaluate.py` load_doc_conversations_from_run_log): its cell-wise process judge (eq. 6-8)."""

from __future__ import annotations

from collections.abc import Sequence

from harness.diagnostics.condensed import cut
from harness.diagnostics.evidence import DocumentIndex, shown_under
from harness.records.events import ActionEvent, Event, ModelCallEvent, ObservationEvent, RetrievalEvent

_OUTPUT_CHARS = 6000
"""Characters kept of each output naming the document (head and tail, the cut said)."""
_PROSE_CHARS = 2000


def asks_per_document(events: Sequence[Event]) -> bool:
    """Whether the episode asked about one document at a time (a retrieval event naming its document)."""
    return any(isinstance(event, RetrievalEvent) and event.document for event in events)


def document_exchanges(events: Sequence[Event], document: str) -> list[tuple[str, str]]:
    """Each question asked about DOCUMENT alone and the model's answer to it, in order."""
    pairs: list[tuple[str, str]] = []
    question: str | None = None
    for event in events:
        if isinstance(event, RetrievalEvent):
            question = event.query if event.document == document else None
        elif isinstance(event, ModelCallEvent) and question is not None:
            pairs.append((question, event.response.text.strip()))
            question = None
    return pairs


def document_conversation(events: Sequence[Event], document: str) -> str:
    """DOCUMENT's questions and answers as `Q: ...` / `A: ...` lines; "" when none was asked."""
    return "\n".join(f"Q: {question}\nA: {answer}" for question, answer in document_exchanges(events, document))


def document_record(events: Sequence[Event], document: str, final_reply: str | None) -> str:
    """What the agent did with DOCUMENT and said at the end; "" when it never named the document. An episode that
    asked about one document at a time: its questions and answers about DOCUMENT (`document_conversation`)."""
    if asks_per_document(events):
        return document_conversation(events, document)
    index = DocumentIndex([document])
    prose: dict[int, str] = {}
    parts: list[str] = []
    naming_turn: int | None = None
    command = ""
    for event in events:
        if isinstance(event, ModelCallEvent):
            prose[event.turn] = event.response.text.strip()
        elif isinstance(event, ActionEvent):
            command = event.command
            naming_turn = event.turn if index.named_in(event.command) else None
            if naming_turn is not None:
                note = prose.get(event.turn, "")
                parts.append(
                    f"## turn {event.turn}\n" + (f"agent: {cut(note, _PROSE_CHARS, 'reply')}\n" if note else "")
                )
                parts.append(f"$ {event.command}")
        elif isinstance(event, ObservationEvent) and naming_turn == event.turn:
            parts.append(cut(event.stdout or "", _OUTPUT_CHARS, "output"))
        elif isinstance(event, ObservationEvent):
            lines = [line for line in (event.stdout or "").splitlines() if shown_under(line, document)]
            if lines:
                parts.append(f"## turn {event.turn} (lines of this document)\n$ {command}")
                parts.append(cut("\n".join(lines), _OUTPUT_CHARS, "output"))
    if not parts:
        return ""
    if final_reply:
        parts.append(f"## final reply\n{cut(final_reply, _PROSE_CHARS, 'reply')}")
    return "\n".join(parts)
