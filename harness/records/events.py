"""The trajectory's events, one record per kind: each is a line `{"event": kind, "time": ..., **fields}` of
an episode's log (trajectory.py), its fields in the order they are declared here.

Each kind is a typed record (core/record.py: exactly its fields, each of exactly its type), told apart by its
`event` field: `AnyEvent` is their one union, which reading.py reads every line with. A field made with
`optional()` is left out of the line when it is None: imported episodes (another agent's format) have no value
for it.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import ConfigDict, Field, JsonValue, model_validator

from harness.core.images import ImageRef
from harness.core.messages import LoggedMessages
from harness.core.record import AsGiven, Number, Record
from harness.core.reply import Attempt, Reply
from harness.records.compact import compact_observation
from harness.records.results import ResultRow

_SCHEMA_VERSION = 3
"""3: each output is stored once (compact.py): an observation's streams are places in its text, and a model
call's messages that repeat the text just shown refer to it; `read_trajectory` gives the events in full.
2: episode_start comes before the sandbox starts (its facts are in sandbox_ready); observations carry
the text the model was shown; harness_error events. An `evidence` event (the documents touched, see
harness/diagnostics/evidence.py) comes just before episode_end; older logs lack it."""

_OPTIONAL = "left out when None"


def optional() -> Any:
    """A field left out of the line when it is None."""
    return Field(default=None, description=_OPTIONAL)


class TaskRecord(AsGiven):
    """The task as its episode_start keeps it (records/episode_log.py `task_record`): what regrading needs from the
    log alone. Older logs lack the newer fields, which are then left out of the line again."""

    question: str | None = None
    answer: str
    answer_format: str | None = None
    grader: str
    rel_tol: Number | None = None
    abs_tol: Number | None = None
    type: str | None = None
    collection: str | None = None
    facts: list[dict[str, JsonValue]] | None = None
    """The task's fact rows as its file gives them (core/facts.py `parse_facts` reads them); only a task with
    facts has them."""


class SandboxFacts(Record):
    """A sandbox backend's description of itself (`Sandbox.describe`: its name under `backend`, then bwrap path,
    image, limits...): backend-opaque, kept as the backend gave it, its keys in its order (an out-of-tree backend
    may name no `backend`)."""

    model_config = ConfigDict(extra="allow")

    @property
    def backend(self) -> str | None:
        """The backend's name (`local`, `docker`, `e2b`), when it gives one."""
        name = (self.model_extra or {}).get("backend")
        return name if isinstance(name, str) else None


class JudgeParams(AsGiven):
    """The parameters a judge was asked with (grading/judge.py)."""

    temperature: Number | None = None


class Event(Record):
    kind: ClassVar[str]

    def to_dict(self) -> dict[str, Any]:
        """The event's fields as logged (without its kind and time), in their declared order."""
        fields = self.model_dump(exclude={"event"})
        return {
            name: value
            for name, value in fields.items()
            if not (value is None and type(self).model_fields[name].description == _OPTIONAL)
        }


class EpisodeStartEvent(Event):
    """Written before the sandbox starts: what regrading needs from the log alone, and the run's facts."""

    kind: ClassVar[str] = "episode_start"
    event: Literal["episode_start"] = "episode_start"
    schema_version: int = _SCHEMA_VERSION
    task_id: str
    domain: str
    task: TaskRecord
    """The task's question, gold and grading settings (records/episode_log.py `task_record`)."""
    task_digest: str
    model: str | None
    """The model as the run names it; an import's, None when its file names none."""
    sandbox: SandboxFacts | None = optional()
    """The backend's facts (an imported episode has none)."""
    collection_hash: str | None = optional()
    config_hash: str | None = optional()
    harness_version: str | None = optional()
    ray_node: str | None = optional()
    """The Ray node that ran the episode (--executor ray)."""
    imported_from: str | None = optional()
    """The file an imported episode was read from."""
    epoch: int | None = optional()
    """Which repeat of the task this episode is, from 2 on (--epochs); None (left out) for the first."""


class SandboxReadyEvent(Event):
    kind: ClassVar[str] = "sandbox_ready"
    event: Literal["sandbox_ready"] = "sandbox_ready"
    sandbox: SandboxFacts
    """The started sandbox's own description."""
    start_s: Number


class ModelCallEvent(Event):
    kind: ClassVar[str] = "model_call"
    event: Literal["model_call"] = "model_call"
    turn: int
    messages: LoggedMessages
    """The messages added since the previous call (the whole conversation is every call's, in order); one that
    repeats the text just shown refers to its event (compact.py)."""
    response: Reply
    """The reply: text, tool calls, usage, cost and the failed attempts before it (its line's fields only)."""
    latency_s: Number | None = optional()
    """None for imported calls."""
    model_id: str | None = optional()
    """The model the provider says answered this call (`ModelReply.model_id`); None (left out) for models that
    name none and in logs older than it."""
    stage: str | None = optional()
    """The solver's stage the call served (the workflow's `plan`, `qa`, `extract`, `continue`, `code`, `answer`);
    None (left out) for an agent's turns."""

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "response": self.response.logged()}


class ModelErrorEvent(Event):
    kind: ClassVar[str] = "model_error"
    event: Literal["model_error"] = "model_error"
    turn: int
    messages: LoggedMessages
    error: str
    attempts: list[Attempt]
    latency_s: Number


class ActionEvent(Event):
    kind: ClassVar[str] = "action"
    event: Literal["action"] = "action"
    turn: int
    command: str
    timeout_s: Number | None = optional()
    """None for imported actions."""


class ObservationEvent(Event):
    kind: ClassVar[str] = "observation"
    event: Literal["observation"] = "observation"
    turn: int
    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool
    truncated: bool
    raw_bytes: int | None
    duration_s: Number | None
    text: str
    """The observation as the model was shown it; a stream found in it is logged as its place there."""

    def to_dict(self) -> dict[str, Any]:
        return compact_observation(super().to_dict())

    @classmethod
    def reported(cls, turn: int, text: str, timed_out: bool = False) -> ObservationEvent:
        """What an agent of another's making says its command showed (an installed agent's tool result, a foreign
        log's): its text only, with no exit code, size or duration of ours."""
        return cls(
            turn=turn,
            exit_code=None,
            stdout=text,
            stderr="",
            timed_out=timed_out,
            truncated=False,
            raw_bytes=None,
            duration_s=None,
            text=text,
        )


class ImageViewEvent(Event):
    """The agent asked to see an image file of its sandbox (`--vision`, episode/vision.py): what it was shown."""

    kind: ClassVar[str] = "image_view"
    event: Literal["image_view"] = "image_view"
    turn: int
    path: str
    """The path as the agent gave it."""
    image: ImageRef | None = optional()
    """The image shown, stored in the run folder by its hash; None (left out) when it was refused."""
    problem: str | None = optional()
    """Why the image was refused (the agent's error); None (left out) when it was shown."""
    text: str
    """The tool's result as the model was shown it, before the image."""


class SharedCallEvent(Event):
    """The episode's question went in one request with others of its document (the zero-shot solver's
    `questions=document`, FinDocMRE's batches): the call is logged once, as the `model_call` of the episode that
    made it (its row alone counts its tokens and cost); every episode of the batch, that one too, says which call
    answered it and what it read there."""

    kind: ClassVar[str] = "shared_call"
    event: Literal["shared_call"] = "shared_call"
    batch: str
    """`<domain>/<document>#<n>`: the batch's name in the run."""
    position: int
    """This question's place in the request, from 1."""
    questions: list[str]
    """The batch's task ids, in the request's order."""
    made_by: str
    """The task id of the episode (of the same epoch) whose trajectory holds the call."""
    answer: str | None
    """The answer read for this question; None when the reply gave none."""
    problem: str | None
    """Why it gave none (the list's element garbled or missing, or the request refused before it was sent)."""


class CropSource(Record):
    """Where one chart's crop came from (`--zero-shot cropped`)."""

    chart: str
    page: int
    source: Literal["embedded", "render"]
    """`embedded`: the figure as the PDF stores it, at its own resolution; `render`: cut from the page image."""
    figure: str | None = None
    """The embedded figure's file in the collection (the one sent, or the one that could not be)."""
    fallback: str | None = None
    """Why a chart that is an embedded figure was cut from the render instead."""


class CropSourcesEvent(Event):
    """The crops a `cropped` request holds, in its order, and where each came from (logged beside the call)."""

    kind: ClassVar[str] = "crop_sources"
    event: Literal["crop_sources"] = "crop_sources"
    crops: list[CropSource]


class FormatErrorEvent(Event):
    kind: ClassVar[str] = "format_error"
    event: Literal["format_error"] = "format_error"
    turn: int
    problem: str
    consecutive: int | None = optional()
    text: str | None = optional()
    """What the model was told (None for imported ones)."""


class HarnessErrorEvent(Event):
    """A failure of ours that the episode's row survived (its cleanup, its evidence record, its grader)."""

    kind: ClassVar[str] = "harness_error"
    event: Literal["harness_error"] = "harness_error"
    during: str
    error: str
    """The traceback, shortened."""


class JudgeCallEvent(Event):
    """One judge's verdict, from a call or the cache (harness/grading/judge.py)."""

    kind: ClassVar[str] = "judge_call"
    event: Literal["judge_call"] = "judge_call"
    model: str
    prompt: str
    params: JudgeParams
    cache_key: str
    cached: bool
    verdict: str | None
    reply: str | None
    dropped_params: list[str]
    """Parameters the model refused, asked again without (temperature)."""
    failure: str | None
    """JUDGE_CALL_FAILED or JUDGE_MALFORMED; None with a verdict."""
    error: str | None = optional()
    """Why the call failed."""
    attempts: list[Attempt] | None = optional()
    """Failed attempts before the reply (a cache hit made none)."""
    input_tokens: int
    output_tokens: int
    cost_usd: Number | None
    latency_s: Number


class AgentTranscriptEvent(Event):
    """An installed agent's own record of its episode (mini-swe-agent's trajectory file, Gemini CLI's stream of
    events as a list), as the agent wrote it,
    beside our `model_call` events of the same calls (the model proxy's, episode/model_proxy.py). What it says is
    the agent's: the row's turns, tokens and cost are ours."""

    kind: ClassVar[str] = "agent_transcript"
    event: Literal["agent_transcript"] = "agent_transcript"
    agent: str
    """The solver's name (`mini-swe-agent`)."""
    version: str
    """The agent's release (its package's version)."""
    transcript: JsonValue
    """The agent's file, parsed (JSON), nothing changed; its text, as a string, where it is not JSON (cut short)."""


class RetrievedChunk(Record):
    """One chunk a retrieval found (harness/inputs/retrieval): its file, its place there, its score, its text."""

    file: str
    index: int
    score: Number
    text: str


class RetrievalSource(Record):
    """Where a retrieval back end searched."""

    chunks: int | None = None
    """The local index's chunks (the collection's, all documents)."""
    vector_store: str | None = None
    """File Search's vector store."""
    usage_bytes: int | None = None
    """The store's size as OpenAI bills its storage."""


class RetrievalEvent(Event):
    """What a solver retrieved for a query (the RAG baseline: the question), before the model read it."""

    kind: ClassVar[str] = "retrieval"
    event: Literal["retrieval"] = "retrieval"
    retriever: str
    query: str
    k: int
    """The chunks asked for (the solver's multiple of the task's document count, rounded up)."""
    chunks: list[RetrievedChunk]
    source: RetrievalSource
    latency_s: Number
    document: str | None = optional()
    """The one document searched (the workflow's per-document questions); None (left out): the whole collection,
    whose chunks are what the RAG baseline's coverage judges read."""


class Touch(Record):
    """One document the episode touched (harness/diagnostics/evidence.py)."""

    document: str
    first_turn: int
    reached_turn: int | None
    """The turn it was first reached (named or shown, or opened); None when only listed."""
    how: list[str]
    """Every way it was touched, sorted: listed, named, opened, shown."""


class EvidenceEvent(Event):
    """The documents the episode touched (harness/diagnostics/evidence.py), just before episode_end."""

    kind: ClassVar[str] = "evidence"
    event: Literal["evidence"] = "evidence"
    method: str
    leakage_method: str
    evidence: list[str]
    touches: list[Touch]
    opens: dict[str, int] | None
    """The exact file opens the host saw, None where it could not see them."""
    facts_seen: list[list[str]] | None = optional()
    """Per fact row of the task, the columns whose values the episode saw (diagnostics/fact_coverage.py); None
    (left out) for a task without facts."""
    facts_stated: list[list[str] | None] | None = optional()
    """Per fact row, the columns a judge found the agent stated (diagnostics/fact_judge.py; None for a row no judge
    answered); None (left out) when no judge was asked at the episode's end."""


class EpisodeEndEvent(Event):
    """The episode's results row, with the submission it was graded on; the last event of a finished log."""

    kind: ClassVar[str] = "episode_end"
    event: Literal["episode_end"] = "episode_end"
    model_config = ConfigDict(arbitrary_types_allowed=True)
    row: ResultRow
    submission: str | None
    """What the grader read: only answered episodes have one."""
    regraded: bool = False
    """A resume graded the logged submission again (the judges had failed); the line says so only then."""

    @model_validator(mode="before")
    @classmethod
    def _from_line(cls, fields: Any) -> Any:
        """A line holds the row's fields beside the submission (`to_dict`): the row is read from them."""
        if not isinstance(fields, dict) or "row" in fields:
            return fields
        row = {key: value for key, value in fields.items() if key not in ("event", "submission", "regraded")}
        kept = {key: fields[key] for key in ("event", "submission", "regraded") if key in fields}
        return {**kept, "row": ResultRow.from_dict(row)}

    def to_dict(self) -> dict[str, Any]:
        fields = {**self.row.to_dict(), "submission": self.submission}
        if self.regraded:
            fields["regraded"] = True
        return fields


AnyEvent = Annotated[
    EpisodeStartEvent
    | SandboxReadyEvent
    | ModelCallEvent
    | ModelErrorEvent
    | ActionEvent
    | ObservationEvent
    | ImageViewEvent
    | SharedCallEvent
    | CropSourcesEvent
    | FormatErrorEvent
    | HarnessErrorEvent
    | JudgeCallEvent
    | AgentTranscriptEvent
    | RetrievalEvent
    | EvidenceEvent
    | EpisodeEndEvent,
    Field(discriminator="event"),
]
"""Every event a log's line can be, told apart by its `event` field (reading.py reads lines with it)."""
