"""`python -m harness show RUN [TASK]`: one trajectory in the terminal, turn by turn: the replies, commands
and outputs, then the verdict, the timing split and the evidence; paged when the output is a terminal."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from harness.analysis.agent_transcript import SHOWN_CHARS, TranscriptView, transcript_view
from harness.cli.command import EXIT_OK, Session
from harness.cli.parser import Parser
from harness.core.errors import InputError
from harness.core.images import ImageRef
from harness.core.safe_text import for_terminal
from harness.records.events import (
    ActionEvent,
    AgentTranscriptEvent,
    CropSource,
    CropSourcesEvent,
    EpisodeEndEvent,
    EpisodeStartEvent,
    EvidenceEvent,
    FormatErrorEvent,
    HarnessErrorEvent,
    ImageViewEvent,
    JudgeCallEvent,
    ModelCallEvent,
    ModelErrorEvent,
    ObservationEvent,
    RetrievalEvent,
    SharedCallEvent,
)
from harness.records.image_store import ImageStore, logged_refs
from harness.records.reading import LoggedEvent, read_events
from harness.records.results import ResultRow
from harness.records.run_folder import find_run_folder

_SHOWN_LINES = 40
"""Lines of a reply or an output shown before the rest is summarised (`--full` shows all)."""


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="python -m harness show",
        description="One episode's trajectory in the terminal, turn by turn, with its verdict, timing split and "
        "evidence (paged on a terminal). Without TASK, the run's episodes.",
    )
    parser.add_argument("run", type=Path, metavar="RUN", help="a run folder, or one trajectory file (.jsonl)")
    parser.add_argument("task", nargs="?", metavar="TASK", help="a task id, or DOMAIN/ID where domains share ids")
    parser.add_argument("--epoch", type=int, default=1, metavar="N", help="which epoch of the task (default 1)")
    parser.add_argument("--full", action="store_true", help="show long replies and outputs whole")
    return parser


def handle(arguments: argparse.Namespace, session: Session) -> int:
    from harness.analysis.run_selection import one_run

    console = session.console
    run = one_run(arguments.run, "show")
    if run.is_file():
        path = run
    else:
        folder = find_run_folder(run)
        rows = folder.latest_rows()
        if arguments.task is None:
            console.print(_episode_list(list(rows.values())))
            console.print("show one with: python -m harness show RUN TASK", markup=False, highlight=False)
            return EXIT_OK
        domain, _, task_id = arguments.task.rpartition("/")
        matches = [key for key in rows if key[1] == task_id and key[2] == arguments.epoch and domain in ("", key[0])]
        if not matches:
            raise InputError(f"{run}: no episode of task {arguments.task!r} epoch {arguments.epoch}")
        if len(matches) > 1:
            raise InputError(f"{arguments.task}: in {len(matches)} domains; give DOMAIN/{task_id}")
        path = folder.trajectory_path(*matches[0])
    events = read_events(path)
    if not events:
        raise InputError(f"{path}: an empty trajectory")
    limit = None if arguments.full else _SHOWN_LINES
    images = _images_beside(path)
    if console.is_terminal:
        with console.pager(styles=True):
            _render(console, events, limit, images)
    else:
        _render(console, events, limit, images)
    return EXIT_OK


def _images_beside(trajectory: Path) -> ImageStore | None:
    """The image store of the run folder holding TRAJECTORY, None for a trajectory outside one."""
    try:
        return find_run_folder(trajectory.parent).images
    except InputError:
        return None


def _episode_list(rows: list[ResultRow]) -> Table:
    table = Table("domain", "task", "epoch", "status", "verdict", "turns", "agent s")
    for row in sorted(rows, key=lambda row: (row.domain, row.task_id, row.epoch)):
        names = (for_terminal(row.domain, keep_newlines=False), for_terminal(row.task_id, keep_newlines=False))
        cells = (*names, str(row.epoch), row.status.value, row.verdict.value, str(row.turns))
        table.add_row(*cells, f"{row.duration_s:.1f}")
    return table


def _clipped(text: str, limit: int | None) -> str:
    lines = text.splitlines()
    if limit is None or len(lines) <= limit:
        return text
    return "\n".join(lines[:limit]) + f"\n… {len(lines) - limit} more lines (--full shows them)"


def _say(console: Console, heading: str, body: str = "", style: str = "bold") -> None:
    """Every text an agent, a provider or a task file wrote reaches the terminal through here or `_shown`."""
    console.print(_shown(heading, style), highlight=False)
    if body:
        console.print(_shown(body), highlight=False)


def _shown(text: str, style: str = "") -> Text:
    """TEXT with its control characters escaped (`\\x1b`, a bare CR as `\\x0d`), whatever the output is (a
    pager, a pipe, PAGER=cat): a reply or an output could set the title, write the clipboard, clear the
    screen, or overwrite a line with a forged verdict."""
    return Text(for_terminal(text), style=style)


def _image_shown(event: ImageViewEvent, images: ImageStore | None) -> str:
    """What the agent was shown of an image: where the run folder keeps it, or why it was refused."""
    if event.image is None:
        return f"  refused: {event.problem}"
    return _image_line(event.image, images)


def _image_line(ref: ImageRef, images: ImageStore | None) -> str:
    where = f"images/{ref.sha256}" if images is None else str(images.path_of(ref))
    return f"  {ref.width}x{ref.height} {ref.media_type}, {ref.bytes:,} bytes: {where}"


def _prompt_images(console: Console, event: ModelCallEvent, images: ImageStore | None) -> None:
    """The images a call's new messages carried (a `--zero-shot` prompt's pages or charts), one line each."""
    refs = [ref for message in event.messages for ref in logged_refs(message)]
    if refs:
        lines = "\n".join(_image_line(ref, images) for ref in refs)
        _say(console, f"── turn {event.turn} · the prompt's {len(refs)} images", lines, "green")


def _render(console: Console, events: list[LoggedEvent], limit: int | None, images: ImageStore | None = None) -> None:
    """Each event once: a reply's tool call is shown as the command it ran (`$ ...`), and as its raw arguments
    only when it was a format error."""
    unread: list[str] = []  # the last reply's tool calls, until an action or a format error says what they were
    for logged in events:
        event = logged.event
        if isinstance(event, EpisodeStartEvent):
            question = event.task.question or ""
            _say(console, f"{event.domain}/{event.task_id} (epoch {event.epoch or 1}) · model {event.model}", question)
        elif isinstance(event, ModelCallEvent):
            _prompt_images(console, event, images)
            reply = event.response
            facts = [f"{event.latency_s or 0:.1f} s", f"{reply.usage.output_tokens} tokens out"]
            if reply.finish_reason not in (None, "stop", "tool_calls"):
                facts.append(f"finish_reason {reply.finish_reason}")
            unread = [f"tool call {call.name}: {call.arguments}" for call in reply.tool_calls]
            _say(
                console, f"── turn {event.turn} · reply ({', '.join(facts)})", _clipped(reply.text, limit), "bold cyan"
            )
        elif isinstance(event, ModelErrorEvent):
            _say(console, f"── turn {event.turn} · model error after {event.latency_s:.1f} s", event.error, "bold red")
        elif isinstance(event, ActionEvent):
            unread = []
            console.print(_shown(f"$ {event.command}", "green"), highlight=False)
        elif isinstance(event, ObservationEvent):
            status = "timed out" if event.timed_out else f"exit {event.exit_code}"
            output = "\n".join(filter(None, [event.stdout, event.stderr]))
            _say(console, f"  {status}, {event.duration_s or 0:.1f} s", _clipped(output, limit), "dim")
        elif isinstance(event, ImageViewEvent):
            _say(console, f"$ view_image {event.path}", _image_shown(event, images), "green")
        elif isinstance(event, SharedCallEvent):
            where = f"question {event.position} of {len(event.questions)} of batch {event.batch}"
            read = f"answer {event.answer!r}" if event.answer is not None else (event.problem or "no answer")
            _say(console, f"── {where}, asked in {event.made_by}'s call", read, "bold cyan")
        elif isinstance(event, CropSourcesEvent):
            crops = [_crop_line(crop) for crop in event.crops]
            _say(console, "── the crops", "\n".join(crops), "dim")
        elif isinstance(event, FormatErrorEvent):
            body = _clipped("\n".join([event.problem, *unread]), limit)
            unread = []
            _say(console, f"── turn {event.turn} · format error", body, "bold yellow")
        elif isinstance(event, HarnessErrorEvent):
            _say(console, f"harness error during {event.during}", _clipped(event.error, limit), "bold red")
        elif isinstance(event, JudgeCallEvent):
            _say(console, f"judge {event.model}: {event.verdict or event.failure or event.error}")
        elif isinstance(event, RetrievalEvent):
            where = f" of {event.document}" if event.document else ""
            found = ", ".join(f"{chunk.file}#{chunk.index} ({chunk.score:.2f})" for chunk in event.chunks)
            _say(
                console, f"retrieved {len(event.chunks)} of {event.k} chunks{where} by {event.retriever}", found, "cyan"
            )
        elif isinstance(event, EvidenceEvent):
            touched = ", ".join(f"{touch.document} (turn {touch.first_turn})" for touch in event.touches)
            listed = ", ".join(event.evidence) or "none listed by the task"
            _say(console, f"evidence ({event.method}): {listed}", f"documents touched: {touched or 'none'}")
        elif isinstance(event, AgentTranscriptEvent):
            _render_transcript(console, transcript_view(event), limit)
        elif isinstance(event, EpisodeEndEvent):
            _render_end(console, event)


def _render_transcript(console: Console, view: TranscriptView, limit: int | None) -> None:
    """The agent's own record of the episode, after ours: its messages role by role, each reply's commands as
    `$ ...`; raw (bounded) where it is not a format we read. A heading's parts are the agent's too: each on the
    heading's line (a role cannot start a line of its own, a forged verdict)."""
    agent = f"══ {_one_line(view.agent)} {_one_line(view.version)} · its own transcript"
    if view.raw is not None:
        _say(console, f"{agent}, shown raw ({_one_line(view.problem or '')})", _clipped(view.raw, limit), "bold blue")
        return
    ending = f", ended {_one_line(view.ending)}" if view.ending else ""
    count = len(view.messages) + view.hidden
    _say(console, f"{agent} ({_one_line(view.format or '')}) · {count} messages{ending}", style="bold blue")
    for message in view.messages:
        _say(console, f"── {_one_line(message.role)}", _clipped(message.text, limit), "blue")
        for command in message.commands:
            console.print(_shown(f"$ {command}", "green"), highlight=False)
    if view.hidden:
        _say(console, f"… {view.hidden} more messages not shown (over {SHOWN_CHARS:,} characters)", style="blue")


def _one_line(text: str) -> str:
    return for_terminal(text, keep_newlines=False)


def _render_end(console: Console, end: EpisodeEndEvent) -> None:
    row = end.row
    heading = f"══ {row.status.value} · {row.verdict.value} · answer {row.answer!r}"
    _say(console, heading, row.detail or "", "bold magenta")
    split = (
        f"agent {row.duration_s:.1f} s · queued {row.queue_s:.1f} s · sandbox start {row.sandbox_start_s:.1f} s · "
        f"retry waits {row.retry_wait_s:.1f} s · failed attempts {row.failed_attempts_s:.1f} s"
    )
    console.print(split, markup=False, highlight=False)
    cost = "unknown" if row.cost_usd is None else f"${row.cost_usd:.4f}"
    tokens = f"{row.turns} turns · {row.input_tokens} tokens in, {row.output_tokens} out · cost {cost}"
    console.print(tokens, markup=False, highlight=False)
    if row.evidence_recall is not None:
        console.print(f"evidence recall {row.evidence_recall:.2f}", markup=False, highlight=False)


def _crop_line(crop: CropSource) -> str:
    line = f"{crop.chart} (page {crop.page}): {crop.figure if crop.source == 'embedded' else 'cut from the page'}"
    return line + (f" (not its figure: {crop.fallback})" if crop.fallback else "")
