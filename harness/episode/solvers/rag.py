"""MuDABench's retrieval baseline (`--solver rag`): no sandbox and no tools; the k chunks of the task's collection
that rank best for its question (k = `chunks` x the task's document count, rounded up, as the paper's |D|, 1.5|D|,
2|D|, 2.5|D|), with or without the set's metadata (the paper's A.7.1 prompt: the collection's index), in one
request; one reply, graded by the task's grader. The chunks are logged as a `retrieval` event, which the
conservative coverage judge reads (diagnostics/retrieved_coverage.py). Retrieval is the local BM25 back end or
OpenAI's File Search (harness/inputs/retrieval)."""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from harness.core.errors import InputError, read_text_input
from harness.core.messages import Message
from harness.core.retrieval_stores import StoreUse
from harness.core.status import EpisodeFailure, EpisodeFinished, Outcome, Status, outcome_of
from harness.episode.query import query_model
from harness.episode.solvers.base import EpisodeInputs, Solver, SolverArgumentError
from harness.episode.solvers.retriever_arguments import RETRIEVER_ARGUMENTS, check_retriever, retriever_of
from harness.grading.answer import has_closed_answer
from harness.inputs.limits import RequestLimits
from harness.inputs.profiles import PROFILES_DIR
from harness.inputs.retrieval.base import Retriever
from harness.inputs.retrieval.chunks import Chunk, index_page
from harness.inputs.tasks import Task, collection_of
from harness.records.compact import compact_messages
from harness.records.events import RetrievalEvent, RetrievalSource, RetrievedChunk

__all__ = ["RagBaseline"]

PROMPT = PROFILES_DIR / "mudabench" / "rag.txt"
CHUNK_SEPARATOR = "\n<next_chunk>\n"
"""Between chunks, as MuDABench's evaluator joins a RAG system's retrieved chunks."""
_METADATA = "The list of document metadata you can query is as follows:\n{metadata}\nYou need to answer the question: "
"""The paper's A.7.1 prompt, its [documentinfo] being the collection's index."""


class RagBaseline(Solver):
    """Retrieve k chunks for the question, read them once."""

    name = "rag"
    needs_sandbox = False
    arguments: ClassVar[Mapping[str, str]] = {
        "chunks": "the chunks retrieved, as a multiple of the task's document count (the paper: 1, 1.5, 2, 2.5)",
        "metadata": "true: the set's metadata (the collection's index) in the prompt, as the paper's A.7.1",
        **RETRIEVER_ARGUMENTS,
    }

    def __init__(self, args: Mapping[str, str]) -> None:
        super().__init__(args)
        try:
            self.multiple = float(self.args.get("chunks", "1"))
        except ValueError:
            raise SolverArgumentError(
                f"chunks={self.args['chunks']!r}: a multiple above 0 of the task's documents"
            ) from None
        if not (math.isfinite(self.multiple) and self.multiple > 0):
            raise SolverArgumentError(f"chunks={self.args['chunks']}: a multiple above 0 of the task's documents")
        if self.args.get("metadata", "false") not in ("true", "false"):
            raise SolverArgumentError(f"metadata={self.args['metadata']!r}: true or false")
        self.metadata = self.args.get("metadata") == "true"
        self.retriever: Retriever = retriever_of(self.args)
        self.prompt = read_text_input(PROMPT, "prompt").strip()

    def k(self, task: Task) -> int:
        """The chunks retrieved for TASK: the multiple of its set's documents (its evidence files), rounded up."""
        return math.ceil(self.multiple * len(task.evidence) - 1e-9)

    def protocol(
        self, spec: str, tasks: list[Task], collections: dict[str, Path], limits: RequestLimits | None = None
    ) -> tuple[str, Any] | None:
        """What run.yaml records (the retrieval with its chunking); every task has a collection and documents, and
        its k is one search's worth for the back end."""
        check_retriever(self.retriever, self.name)
        for task in tasks:
            where = f"task {task.domain}/{task.id}"
            if collections.get(collection_of(task)) is None:
                raise InputError(f"{where}: no collection to retrieve from")
            if not task.evidence:
                raise InputError(f"{where}: no documents (evidence) to count the chunks by")
            most = self.retriever.max_k
            if most is not None and self.k(task) > most:
                raise InputError(
                    f"{where}: chunks={self.multiple:g} x {len(task.evidence)} documents = {self.k(task)} chunks, "
                    f"above the {most} one File Search returns"
                )
        return "rag", {
            "retriever": self.retriever.settings(),
            "chunks_per_document": self.multiple,
            "metadata": self.metadata,
            "prompt_digest": "sha256:" + hashlib.sha256(self.prompt.encode()).hexdigest()[:16],
        }

    def without_sandbox(self) -> str:
        return f"--solver rag: {self.multiple:g} chunks a document, retrieved by {self.retriever.name}; no sandbox"

    def finish(self, collections: Iterable[Path]) -> list[StoreUse]:
        return self.retriever.release(collections)

    def solve(self, episode: EpisodeInputs) -> Outcome:
        """The episode: the search logged, the request checked, one call, the reply as the outcome."""
        task = episode.task
        try:
            if episode.collection is None:
                raise InputError(f"task {task.domain}/{task.id}: no collection to retrieve from")
            k = self.k(task)
            started = time.monotonic()
            found = self.retriever.search(episode.collection, task.question, k)
            episode.log.write(
                RetrievalEvent(
                    retriever=self.retriever.name,
                    query=task.question,
                    k=k,
                    chunks=[RetrievedChunk(**chunk.record()) for chunk in found.chunks],
                    source=RetrievalSource(**found.source),
                    latency_s=round(time.monotonic() - started, 3),
                )
            )
            messages = self.messages(task, found.chunks, episode.collection)
            reply = query_model(episode.model, messages, episode.budget, episode.log, compact_messages(messages, None))
            if not has_closed_answer(reply.text):  # the final-reply judge (MuDABench's) still reads it
                raise EpisodeFinished(Status.FORMAT_ERRORS, submission=reply.text, detail="no closed <answer> tag")
            raise EpisodeFinished(Status.ANSWERED, submission=reply.text)
        except (EpisodeFinished, EpisodeFailure) as end:
            return outcome_of(end)

    def messages(self, task: Task, chunks: list[Chunk], collection: Path) -> list[Message]:
        """The prompt file as the system message; the chunks, (the metadata) and the question as the user's."""
        excerpts = CHUNK_SEPARATOR.join(f"[{chunk.file}]\n{chunk.text}" for chunk in chunks) or "(nothing retrieved)"
        question = task.question
        if self.metadata:
            index = index_page(collection)
            listed = index.read_text(encoding="utf-8").strip() if index is not None else "(no index)"
            question = _METADATA.format(metadata=listed) + question
        user = f"Retrieved excerpts:\n{excerpts}\n\n{question}"
        return [{"role": "system", "content": self.prompt}, {"role": "user", "content": user}]
