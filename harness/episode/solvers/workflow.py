"""MuDABench's agentic workflow (paper §4, Algorithm 1; `--solver workflow`), written after its released runner
(agent/agent_runner.py) with prompts of our own (harness/inputs/profiles/mudabench/workflow-*.txt):

1. plan: the question and the metadata fields to templates of per-document sub-questions, each with an optional
   metadata restriction;
2. per-document QA: each template filled in with each document's metadata (the collection's index) that meets
   its restriction, answered from the chunks retrieved from that document alone (`chunks` of them, the paper's
   1, 3 or 5; either retrieval back end) by one call;
3. normalization: per template, its first five records to a flat JSON list with a description of its keys, each
   further record continued in the same keys;
4. aggregation: a program written from a few objects of each list, their paths and keys, run in the task's
   sandbox (never on the host: theirs runs it with the host's Python) on the whole lists, under the episode's
   command timeout;
5. the final answer from the keys, the program and its output.

Every call is a `model_call` event (one turn each); each search a `retrieval` event, the program's run an
`action` and `observation`. All stages ask the run's model (theirs: DeepSeek-R1 plans and codes, DeepSeek-V3
normalizes, GPT-4o or GPT-4.1-mini reads). A plan that cannot be read falls back to one template, as theirs; no
normalized data ends the episode as `format_errors`, as theirs gives up.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar

from harness.core.errors import InputError, read_text_input
from harness.core.messages import Message
from harness.core.retrieval_stores import StoreUse
from harness.core.status import EpisodeFailure, EpisodeFinished, Outcome, Status, outcome_of
from harness.episode.query import query_model
from harness.episode.solvers.agent_loop import observation_event
from harness.episode.solvers.base import EpisodeInputs, Solver, SolverArgumentError
from harness.episode.solvers.retriever_arguments import RETRIEVER_ARGUMENTS, check_retriever, retriever_of
from harness.episode.solvers.workflow_steps import (
    METADATA_FIELDS,
    code_of,
    fill,
    json_list,
    read_plan,
    satisfies,
    tagged,
)
from harness.grading.answer import has_closed_answer
from harness.inputs.limits import RequestLimits
from harness.inputs.profiles import PROFILES_DIR
from harness.inputs.retrieval.base import Retriever
from harness.inputs.retrieval.chunks import index_page, index_rows
from harness.inputs.tasks import Task, collection_of
from harness.records.compact import compact_messages
from harness.records.events import ActionEvent, RetrievalEvent, RetrievalSource, RetrievedChunk

__all__ = ["Workflow"]

_STAGES = ("plan", "qa", "extract", "continue", "code", "answer")
WORKDIR = "/tmp/workflow"
"""Where the lists and the program go in the sandbox."""
_FIRST = 5
"""Records normalized together before the rest are continued one by one (theirs: 5)."""
_WRITE_BYTES = 64 * 1024
"""Base64 bytes a write command carries (one command's argument is at most 128 KiB)."""


class Workflow(Solver):
    """Plan, per-document QA by retrieval, normalization, aggregation code in the sandbox, answer."""

    name = "workflow"
    needs_sandbox = True
    arguments: ClassVar[Mapping[str, str]] = {
        "chunks": "chunks retrieved per document question (the paper: 1, 3, 5; default 3)",
        **RETRIEVER_ARGUMENTS,
    }

    def __init__(self, args: Mapping[str, str]) -> None:
        super().__init__(args)
        given = self.args.get("chunks", "3")
        self.chunks = int(given) if given.strip().isdigit() else 0
        if not 1 <= self.chunks <= 50:
            raise SolverArgumentError(f"chunks={given!r}: from 1 to 50 chunks a document question")
        self.retriever: Retriever = retriever_of(self.args)
        self.prompts = {
            stage: read_text_input(PROFILES_DIR / "mudabench" / f"workflow-{stage}.txt", "prompt").strip()
            for stage in _STAGES
        }

    def protocol(
        self, spec: str, tasks: list[Task], collections: dict[str, Path], limits: RequestLimits | None = None
    ) -> tuple[str, Any] | None:
        check_retriever(self.retriever, self.name)
        for task in tasks:
            folder = collections.get(collection_of(task))
            if folder is None or index_page(folder) is None:
                raise InputError(f"task {task.domain}/{task.id}: no collection index to read the documents' metadata")
        digest = json.dumps(self.prompts, sort_keys=True)
        return "workflow", {
            "retriever": self.retriever.settings(),
            "chunks_per_question": self.chunks,
            "prompts_digest": "sha256:" + hashlib.sha256(digest.encode()).hexdigest()[:16],
        }

    def finish(self, collections: Iterable[Path]) -> list[StoreUse]:
        return self.retriever.release(collections)

    def solve(self, episode: EpisodeInputs) -> Outcome:
        try:
            return self._solve(episode)
        except (EpisodeFinished, EpisodeFailure) as end:
            return outcome_of(end)

    def _solve(self, episode: EpisodeInputs) -> Outcome:
        task, collection = episode.task, episode.collection
        index = index_page(collection) if collection is not None else None
        if collection is None or index is None:
            raise InputError(f"task {task.domain}/{task.id}: no collection index to read the documents' metadata")
        documents = index_rows(index.read_text(encoding="utf-8"))
        plan = read_plan(self._ask(episode, "plan", {"TASK": task.question, "FIELDS": METADATA_FIELDS}), task.question)
        groups: list[list[str]] = []
        for step in plan:
            records = []
            for meta in documents:
                if not satisfies(meta, step["restriction"]) or "file" not in meta:
                    continue
                question = fill(step["subtask"], meta)
                answer = self._document_answer(episode, collection, meta["file"], question)
                records.append(f"Q: {question}\nA: {answer}")
            groups.append(records)
        lists = [found for records in groups if records and (found := self._normalized(episode, records))]
        if not lists:
            raise EpisodeFinished(Status.FORMAT_ERRORS, detail="the normalization gave no JSON list")
        output, code = self._aggregate(episode, lists)
        schemas = "\n".join(f"No.{n} keys: {schema or 'N/A'}" for n, (_, schema) in enumerate(lists, start=1))
        reply = self._ask(
            episode, "answer", {"TASK": task.question, "SCHEMAS": schemas, "CODE": code, "OUTPUT": output}
        )
        if not has_closed_answer(reply):
            raise EpisodeFinished(Status.FORMAT_ERRORS, submission=reply, detail="no closed <answer> tag")
        raise EpisodeFinished(Status.ANSWERED, submission=reply)

    def _ask(self, episode: EpisodeInputs, stage: str, values: dict[str, str]) -> str:
        prompt = self.prompts[stage]
        for name, value in values.items():
            prompt = prompt.replace(f"<<{name}>>", value)
        messages: list[Message] = [{"role": "user", "content": prompt}]
        reply = query_model(
            episode.model, messages, episode.budget, episode.log, compact_messages(messages, None), stage=stage
        )
        return reply.text

    def _document_answer(self, episode: EpisodeInputs, collection: Path, file: str, question: str) -> str:
        started = time.monotonic()
        found = self.retriever.search(collection, question, self.chunks, file=file)
        episode.log.write(
            RetrievalEvent(
                retriever=self.retriever.name,
                query=question,
                k=self.chunks,
                chunks=[RetrievedChunk(**chunk.record()) for chunk in found.chunks],
                source=RetrievalSource(**found.source),
                latency_s=round(time.monotonic() - started, 3),
                document=file,
            )
        )
        excerpts = "\n<next_chunk>\n".join(chunk.text for chunk in found.chunks) or "(nothing retrieved)"
        return self._ask(episode, "qa", {"FILE": file, "EXCERPTS": excerpts, "QUESTION": question})

    def _normalized(self, episode: EpisodeInputs, records: list[str]) -> tuple[list[Any], str] | None:
        """The records as one JSON list and its keys' description (theirs: the first five at once, then each)."""
        reply = self._ask(episode, "extract", {"TASK": episode.task.question, "RECORDS": "\n".join(records[:_FIRST])})
        first = json_list(tagged(reply, "json") or reply)
        if first is None:
            return None
        rows = list(first)
        for record in records[_FIRST:]:
            more = self._ask(episode, "continue", {"JSON": json.dumps(first, ensure_ascii=False), "RECORD": record})
            rows.extend(json_list(tagged(more, "json") or "") or [])
        return rows, tagged(reply, "des") or ""

    def _aggregate(self, episode: EpisodeInputs, lists: list[tuple[list[Any], str]]) -> tuple[str, str]:
        """The program written from samples of LISTS, run in the sandbox on the whole lists: (its output, it)."""
        sandbox = episode.sandbox
        assert sandbox is not None  # needs_sandbox
        paths = [f"{WORKDIR}/data_{n}.json" for n in range(1, len(lists) + 1)]
        values = {
            "TASK": episode.task.question,
            "SAMPLES": "\n".join(
                f"No.{n}: {json.dumps(rows[:3], ensure_ascii=False)}" for n, (rows, _) in enumerate(lists, start=1)
            ),
            "PATHS": "\n".join(f"No.{n}: {path}" for n, path in enumerate(paths, start=1)),
            "SCHEMAS": "\n".join(f"No.{n}: {schema or 'N/A'}" for n, (_, schema) in enumerate(lists, start=1)),
        }
        code = code_of(self._ask(episode, "code", values))
        if not code:
            return "no executable code found", code
        files = {path: json.dumps(rows, ensure_ascii=False) for path, (rows, _) in zip(paths, lists, strict=True)}
        files[f"{WORKDIR}/analysis.py"] = code
        timeout = episode.budget.command_timeout(episode.loop.command_timeout_s)
        for path, text in files.items():
            encoded = base64.b64encode(text.encode()).decode()
            sandbox.execute(f"mkdir -p {WORKDIR} && : > {path}", timeout)
            for start in range(0, len(encoded), _WRITE_BYTES):
                sandbox.execute(f"printf %s '{encoded[start : start + _WRITE_BYTES]}' | base64 -d >> {path}", timeout)
        command = f"cd {WORKDIR} && python3 analysis.py"
        turn = episode.budget.turns
        episode.log.write(ActionEvent(turn=turn, command=command, timeout_s=timeout))
        result = sandbox.execute(command, timeout)
        shown = result.stdout + (f"\n[stderr]\n{result.stderr}" if result.stderr else "")
        if result.timed_out:
            shown += f"\n[the program was stopped after {timeout:.0f} s]"
        episode.log.write(observation_event(turn, result, shown))
        return shown.strip() or "(no output)", code
