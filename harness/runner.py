"""A run: validate everything first (nothing is written on bad input), then run the episodes that are not
finished yet into the run folder. Re-running a `--run-id` resumes it."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import re
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console

import harness
from harness.batch import BatchLimits, BatchState, run_batch
from harness.collection.hashing import collection_hash
from harness.config import RunConfig, config_to_dict
from harness.episode import EpisodeContext, EpisodeResult
from harness.errors import InputError
from harness.grading.numeric import GRADER_VERSION
from harness.models.factory import ModelFactory, model_factory
from harness.prompts import PromptSet, load_prompts
from harness.results_store import ResultsWriter, finished_rows, latest_rows, read_rows
from harness.sandboxes import Sandbox, SandboxSettings
from harness.sandboxes.backends import SandboxBackend, prepare_backend
from harness.sandboxes.limits import ResourceLimits
from harness.summary import print_table, summarize, summary_to_dict
from harness.tasks import Task, collection_path, load_task_file, resolve_domains, select_tasks, shard_tasks
from harness.trajectory import trajectory_path

PROTOCOL_KEYS = (
    "model", "max_turns", "time_limit", "command_timeout", "context_window", "output_reserve", "action_format",
    "max_format_errors", "temperature", "model_args",
)  # fmt: skip
"""Settings that change what a score means (with the grader version and the prompts' digest); a run
refuses to resume under different ones."""


@dataclass
class RunPlan:
    config: RunConfig
    tasks: list[Task]
    """The selected tasks (after --task-id, --limit and --shard)."""
    pending: list[Task]
    """Those still to run: all of them, or on resume the unfinished ones and infrastructure failures."""
    kept: list[dict[str, Any]]
    """On resume, the results rows of the selected tasks that are not run again."""
    collections: dict[str, Path]
    make_model: ModelFactory
    backend: SandboxBackend
    run_id: str
    run_dir: Path
    protocol: dict[str, Any]
    prompts: PromptSet


def protocol_of(config: RunConfig, prompts: PromptSet) -> dict[str, Any]:
    settings = {key: getattr(config, key) for key in PROTOCOL_KEYS}
    return settings | {"grader_version": GRADER_VERSION, "prompts": prompts.digest}


def plan_run(config: RunConfig) -> RunPlan:
    """Every check that can fail on input happens here, before anything is written."""
    domains = resolve_domains(config.domain, config.tasks_dir)
    tasks: list[Task] = []
    for domain in domains:
        tasks += load_task_file(config.tasks_dir / f"{domain}.jsonl")
    tasks = shard_tasks(select_tasks(tasks, config.task_ids, config.limit), config.shard)
    collections = {domain: collection_path(config.collections_dir, domain) for domain in domains}
    make_model = model_factory(config, tasks)
    prompts = load_prompts(config.prompts)
    run_id = config.run_id or default_run_id(config)
    if not re.fullmatch(r"[A-Za-z0-9_.@+-]+", run_id):
        raise InputError(f"--run-id: {run_id!r} may hold only letters, digits and _ . @ + -")
    run_dir = config.results_dir / run_id
    protocol = protocol_of(config, prompts)
    kept: list[dict[str, Any]] = []
    if run_dir.exists():
        _check_resumable(run_dir, protocol, config.allow_protocol_change)
        if not config.redo:
            kept = finished_rows(run_dir / "results.jsonl", _keys(tasks))
    finished = {(row["domain"], row["task_id"]) for row in kept}
    pending = [task for task in tasks if (task.domain, task.id) not in finished]
    settings = SandboxSettings(ResourceLimits(config.memory_mb, config.pids, config.cpus), config.output_limit)
    backend = prepare_backend(config.sandbox, settings, run_id, domains, config.time_limit, config.image)
    return RunPlan(config, tasks, pending, kept, collections, make_model, backend, run_id, run_dir, protocol, prompts)


def _check_resumable(run_dir: Path, protocol: dict[str, Any], allow_change: bool) -> None:
    record_path = run_dir / "run.yaml"
    if not record_path.is_file():
        raise InputError(f"{run_dir}: exists but holds no run.yaml; choose another --run-id")
    recorded = yaml.safe_load(record_path.read_text(encoding="utf-8")).get("protocol", {})
    changes = [f"{key} {recorded.get(key)!r} -> {value!r}" for key, value in protocol.items()
               if recorded.get(key) != value]  # fmt: skip
    if changes and not allow_change:
        raise InputError(
            f"--run-id {run_dir.name}: the run was made under a different protocol ({'; '.join(changes)}); "
            "resume with the same settings, or pass --allow-protocol-change"
        )


def default_run_id(config: RunConfig) -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    model = re.sub(r"[^A-Za-z0-9_.-]+", "-", config.model.replace("scripted:", "scripted-"))
    domain = re.sub(r"[^A-Za-z0-9_.-]+", "-", config.domain)
    return f"{stamp}_{model}_{domain}"[:120]


def execute_run(plan: RunPlan, console: Console) -> list[EpisodeResult]:
    """Run the pending episodes; raises KeyboardInterrupt after a clean cancel when interrupted."""
    config = plan.config
    collection_hashes = {domain: collection_hash(path) for domain, path in plan.collections.items()}
    config_hash = "sha256:" + hashlib.sha256(json.dumps(plan.protocol, sort_keys=True).encode()).hexdigest()[:16]
    if plan.run_dir.exists():
        kept, total = len(plan.kept), len(plan.tasks)
        console.print(f"resuming {plan.run_id}: {kept} of {total} episodes kept, {len(plan.pending)} to run")
    _write_run_record(plan, collection_hashes, config_hash)
    for task in plan.pending:
        _keep_previous_attempt(trajectory_path(plan.run_dir, task.domain, task.id))
    cancel = threading.Event()
    context = EpisodeContext(
        config=config,
        prompts=plan.prompts,
        make_model=plan.make_model,
        make_sandbox=functools.partial(_new_sandbox, plan, cancel),
        run_dir=plan.run_dir,
        run_facts={"config_hash": config_hash, "harness_version": harness.__version__},
        collection_hashes=collection_hashes,
        cancel=cancel,
    )
    limits = BatchLimits(
        workers=config.workers,
        max_sandboxes=config.max_sandboxes or config.workers,
        max_connections=config.max_connections or config.workers,
        max_cost_usd=config.max_cost,
    )
    state = BatchState(done=len(plan.kept), correct=sum(row["verdict"] == "correct" for row in plan.kept))
    writer = ResultsWriter(plan.run_dir / "results.jsonl")
    try:
        results, interrupted = run_batch(
            plan.pending, context, limits, writer, console, f"{config.model} on {config.domain}", state
        )
    finally:
        writer.close()
    _finish(plan, console)
    if state.skipped_for_cost:
        console.print(f"stopped at --max-cost {config.max_cost}: {state.skipped_for_cost} episodes not started")
    if interrupted:
        raise KeyboardInterrupt
    return results


def _keys(tasks: list[Task]) -> set[tuple[str, str]]:
    return {(task.domain, task.id) for task in tasks}


def _write_run_record(plan: RunPlan, collection_hashes: dict[str, str], config_hash: str) -> None:
    path = plan.run_dir / "run.yaml"
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    if path.exists():  # a resume: keep the original record, note when it was resumed and with what
        record = yaml.safe_load(path.read_text(encoding="utf-8"))
        resume = {"at": now, "pending": len(plan.pending), "config": config_to_dict(plan.config)}
        record.setdefault("resumed", []).append(resume)
    else:
        plan.run_dir.mkdir(parents=True)
        record = {
            "run_id": plan.run_id,
            "created": now,
            "harness_version": harness.__version__,
            "python": platform.python_version(),
            "config": config_to_dict(plan.config),
            "config_hash": config_hash,
            "protocol": plan.protocol,
            "sandbox": plan.backend.facts,
            "collections": {d: {"path": str(p), "hash": collection_hashes[d]} for d, p in plan.collections.items()},
            "tasks": len(plan.tasks),
        }
    _write_atomic(path, yaml.safe_dump(record, sort_keys=False, allow_unicode=True))


def _keep_previous_attempt(path: Path) -> None:
    """A re-run episode's earlier trajectory moves to episodes/<domain>/previous/, kept for audit."""
    if not path.exists():
        return
    folder = path.parent / "previous"
    folder.mkdir(exist_ok=True)
    attempt = 1 + len(list(folder.glob(f"{path.stem}.*.jsonl")))
    path.rename(folder / f"{path.stem}.{attempt}.jsonl")


def _finish(plan: RunPlan, console: Console) -> None:
    """summary.json and the table from the latest row of every selected task in results.jsonl."""
    selected = _keys(plan.tasks)
    rows = [row for key, row in latest_rows(read_rows(plan.run_dir / "results.jsonl")).items() if key in selected]
    summaries = summarize(rows)
    _write_atomic(plan.run_dir / "summary.json", json.dumps(summary_to_dict(summaries), indent=2) + "\n")
    print_table(summaries, console, title=f"run {plan.run_id}")
    console.print(f"results: {plan.run_dir}")


def _write_atomic(path: Path, text: str) -> None:
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def _new_sandbox(plan: RunPlan, cancel: threading.Event, task: Task, name: str) -> Sandbox:
    return plan.backend.new_sandbox(task.domain, plan.collections[task.domain], name, cancel)
