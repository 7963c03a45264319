"""A run: validate everything first (nothing is written on bad input), then run episodes into a run folder."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import re
import threading
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import yaml
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

import harness
from harness.config import RunConfig, config_to_dict
from harness.episode import EpisodeContext, EpisodeResult, run_episode
from harness.errors import InputError
from harness.grading.numeric import GRADER_VERSION
from harness.models.factory import ModelFactory, model_factory
from harness.prompts import load_prompts
from harness.sandboxes import Sandbox, SandboxSettings
from harness.sandboxes.backends import SandboxBackend, prepare_backend
from harness.sandboxes.limits import ResourceLimits
from harness.summary import print_table, summarize, summary_to_dict
from harness.tasks import Task, collection_path, load_task_file, resolve_domains, select_tasks

PROTOCOL_KEYS = ("model", "max_turns", "time_limit", "command_timeout", "context_window", "action_format")


@dataclass
class RunPlan:
    config: RunConfig
    tasks: list[Task]
    collections: dict[str, Path]
    make_model: ModelFactory
    backend: SandboxBackend
    run_id: str
    run_dir: Path


def plan_run(config: RunConfig) -> RunPlan:
    """Every check that can fail on input happens here, before anything is written."""
    domains = resolve_domains(config.domain, config.tasks_dir)
    tasks: list[Task] = []
    for domain in domains:
        tasks += load_task_file(config.tasks_dir / f"{domain}.jsonl")
    tasks = select_tasks(tasks, config.task_ids, config.limit)
    collections = {domain: collection_path(config.collections_dir, domain) for domain in domains}
    make_model = model_factory(config, tasks)
    run_id = config.run_id or default_run_id(config)
    if not re.fullmatch(r"[A-Za-z0-9_.@+-]+", run_id):
        raise InputError(f"--run-id: {run_id!r} may hold only letters, digits and _ . @ + -")
    run_dir = config.results_dir / run_id
    if run_dir.exists():
        raise InputError(f"{run_dir}: run folder already exists; choose another --run-id")
    settings = SandboxSettings(ResourceLimits(config.memory_mb, config.pids, config.cpus), config.output_limit)
    backend = prepare_backend(config.sandbox, settings, run_id, domains, config.time_limit, config.image)
    return RunPlan(config, tasks, collections, make_model, backend, run_id, run_dir)


def default_run_id(config: RunConfig) -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    model = re.sub(r"[^A-Za-z0-9_.-]+", "-", config.model.replace("scripted:", "scripted-"))
    domain = re.sub(r"[^A-Za-z0-9_.-]+", "-", config.domain)
    return f"{stamp}_{model}_{domain}"[:120]


def collection_hash(path: Path) -> str:
    """sha256 over every file's relative path and content, in name order."""
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        digest.update(str(file.relative_to(path)).encode() + b"\0")
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\0")
    return "sha256:" + digest.hexdigest()


def execute_run(plan: RunPlan, console: Console) -> list[EpisodeResult]:
    config = plan.config
    collection_hashes = {domain: collection_hash(path) for domain, path in plan.collections.items()}
    protocol = {key: getattr(config, key) for key in PROTOCOL_KEYS} | {"grader_version": GRADER_VERSION}
    config_hash = "sha256:" + hashlib.sha256(json.dumps(protocol, sort_keys=True).encode()).hexdigest()[:16]
    plan.run_dir.mkdir(parents=True)
    run_record = {
        "run_id": plan.run_id,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "harness_version": harness.__version__,
        "python": platform.python_version(),
        "config": config_to_dict(config),
        "config_hash": config_hash,
        "protocol": protocol,
        "sandbox": plan.backend.facts,
        "collections": {d: {"path": str(p), "hash": collection_hashes[d]} for d, p in plan.collections.items()},
        "tasks": len(plan.tasks),
    }
    _write_atomic(plan.run_dir / "run.yaml", yaml.safe_dump(run_record, sort_keys=False, allow_unicode=True))
    cancel = threading.Event()
    context = EpisodeContext(
        config=config,
        prompts=load_prompts(),
        make_model=plan.make_model,
        make_sandbox=functools.partial(_new_sandbox, plan, cancel),
        run_dir=plan.run_dir,
        run_facts={"config_hash": config_hash, "harness_version": harness.__version__},
        collection_hashes=collection_hashes,
        cancel=cancel,
    )
    results: list[EpisodeResult] = []
    interrupted = False
    with (
        (plan.run_dir / "results.jsonl").open("a", encoding="utf-8") as results_file,
        Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("correct {task.fields[correct]}"),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        ) as progress,
        ThreadPoolExecutor(max_workers=config.workers) as pool,
    ):
        bar = progress.add_task(f"{config.model} on {config.domain}", total=len(plan.tasks), correct=0)

        futures = [pool.submit(run_episode, task, context) for task in plan.tasks]

        def record(result: EpisodeResult) -> None:
            results_file.write(json.dumps(result.to_dict(), ensure_ascii=False) + "\n")
            results_file.flush()
            os.fsync(results_file.fileno())
            results.append(result)
            progress.update(bar, advance=1, correct=sum(r.verdict == "correct" for r in results))

        recorded: set[Future[EpisodeResult]] = set()
        try:
            for future in as_completed(futures):
                record(future.result())
                recorded.add(future)
        except KeyboardInterrupt:
            cancel.set()  # running episodes stop at their next step and end as `cancelled`
            for future in futures:
                future.cancel()
            for future in futures:
                if future not in recorded and not future.cancelled():
                    record(future.result())
            interrupted = True
    _finish(plan, results, console)
    if interrupted:
        raise KeyboardInterrupt
    return results


def _finish(plan: RunPlan, results: list[EpisodeResult], console: Console) -> None:
    rows = [result.to_dict() for result in results]
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
