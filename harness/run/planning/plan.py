"""Planning a run: every input checked and what the run will do computed (`plan_run` -> `RunPlan`) before
anything is written; then its folder is locked, no more."""

from __future__ import annotations

import hashlib
import re
import secrets
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness.core.errors import InputError, NothingSelected
from harness.core.names import check_label, check_run_id
from harness.core.status import INFRASTRUCTURE_FAILURES
from harness.core.writable import check_writable_folder
from harness.episode.solvers import Solver
from harness.episode.vision import VisionLimits
from harness.grading import GRADERS, JUDGED
from harness.grading.judge import JudgePanel
from harness.inputs.collections.hashing import collection_files
from harness.inputs.config import RunConfig
from harness.inputs.evidence_files import check_evidence
from harness.inputs.limits import request_limits
from harness.inputs.prompts import PromptSet, load_prompts
from harness.inputs.tasks import (
    Task,
    collection_of,
    collection_path,
    load_task_file,
    resolve_domains,
    select_tasks,
    shard_tasks,
    task_file,
)
from harness.records.results import ResultRow
from harness.records.run_folder import RunFolder, RunLock
from harness.records.run_record import ProfileRecord
from harness.run.judging.judges import JudgeOptions
from harness.run.leak_check import LeakCheck
from harness.run.planning.epochs import check_epochs, episodes_of
from harness.run.planning.model_factory import (
    ModelFactory,
    model_factory,
    reply_reserve,
    scripted_file,
    unpriced_refusal,
)
from harness.run.planning.protocol_plan import plan_protocol
from harness.run.planning.resume import check_resumable, check_same_domains, kept_rows
from harness.run.sandboxing.backends import backend_of
from harness.run.sandboxing.leftovers import new_invocation
from harness.sandboxes.backend import SandboxBackend
from harness.sandboxes.registry import backend_class

_PROTOCOL_KEYS = (
    "model",
    "max_turns",
    "time_limit",
    "command_timeout",
    "context_window",
    "output_reserve",
    "action_format",
    "max_format_errors",
    "temperature",
    "model_args",
)
"""Settings that change what a score means (with the graders' versions, the prompts' and a scripted model's
digests); a run refuses to resume under different ones, or over changed collections."""


@dataclass(kw_only=True)
class RunPlan:
    """What a run will do, checked and computed by `plan_run` with nothing started: its folder is locked, no
    more."""

    config: RunConfig
    episodes: list[Task]
    """The selected episodes: each task (after --task-id, --limit and --shard) once per epoch (`Task.epoch`)."""
    pending: list[Task]
    """Those still to run: all of them, or on resume the unfinished ones, infrastructure failures, and tasks
    whose question or gold changed."""
    kept: list[ResultRow]
    """On resume, the results rows of the selected tasks that are not run again."""
    collections: dict[str, Path]
    collection_hashes: dict[str, str]
    make_model: ModelFactory
    backend: SandboxBackend
    run_id: str
    folder: RunFolder
    protocol: dict[str, Any]
    prompts: PromptSet
    lock: RunLock
    """Held until the run ends: a second runner on the same folder is refused."""
    invocation: str
    """This start of the run (run/sandboxing/leftovers.py), the same on every Ray node."""
    resumed: bool
    made: Path | None = None
    """The top-most folder the plan made for the run folder (it or a results folder above it); a run that
    refuses when it starts removes it again, so bad input leaves nothing written."""
    changed_tasks: int = 0
    """On resume, finished tasks run again because what they ask or grade changed."""
    leaks: LeakCheck | None = None
    """The leakage check (harness/inputs/leakage.py), running while the first episodes start; None: not run."""
    judge: JudgePanel | None = None
    """The judges of tasks graded by `judge`; None when no selected task is."""
    solver: Solver
    profile: ProfileRecord | None
    """What run.yaml records of the benchmark profile the run follows (None: a replay of a run from before
    profiles, recorded as that run was)."""

    @property
    def run_dir(self) -> Path:
        return self.folder.path


def protocol_of(config: RunConfig, prompts: PromptSet, tasks: list[Task]) -> dict[str, Any]:
    settings = {key: getattr(config, key) for key in _PROTOCOL_KEYS}
    if config.max_episode_cost is not None:  # only a capped run's record names it: older runs' stay as they are
        settings["max_episode_cost"] = config.max_episode_cost
    graders = {name: GRADERS[name].version for name in sorted({task.grader for task in tasks})}
    return settings | {"graders": graders, "prompts": prompts.digest, "model_digest": _model_digest(config.model)}


def _judge_panel(config: RunConfig, tasks: list[Task]) -> JudgePanel | None:
    """The panel from `--judge`, when a selected task needs one; its cache is shared by every run in results_dir."""
    judged = [task for task in tasks if task.grader in JUDGED]
    if not judged:
        return None
    where = f"task {judged[0].domain}/{judged[0].id} is graded by '{judged[0].grader}'"
    options = JudgeOptions(
        config.judge,
        config.judge_quorum,
        config.judge_api_base,
        config.judge_timeout,
        config.max_retries,
        config.judge_prompt,
    )
    return options.panel(config.results_dir, where, config.model_aliases)


def _model_digest(spec: str) -> str | None:
    """A scripted model's replies are its behaviour: their digest is part of the protocol."""
    script = scripted_file(spec)
    if script is None:
        return None
    return "sha256:" + hashlib.sha256(script.read_bytes()).hexdigest()[:16]


def plan_run(config: RunConfig) -> RunPlan:
    """Every check that can fail on input happens here, before anything is written; then the folder is locked.
    Nothing else changes: the backend is checked, not started (`execute_run` starts it)."""
    backend_class(config.sandbox)  # an unknown name before any task file is read
    domains = resolve_domains(config.domain, config.tasks_dir)
    tasks: list[Task] = []
    for domain in domains:
        tasks += load_task_file(task_file(config.tasks_dir, domain, config.follow_links))
    tasks = shard_tasks(select_tasks(tasks, config.task_ids, config.limit), config.shard)
    if not tasks:
        raise NothingSelected(f"{config.model} on {config.domain}: no task selected{_selection_of(config)}")
    protocol_plan = plan_protocol(config, tasks)
    config, tasks = protocol_plan.config, protocol_plan.tasks
    names = sorted({collection_of(task) for task in tasks}) or domains
    collections = {name: collection_path(config.collections_dir, name, config.follow_links) for name in names}
    episodes = episodes_of(tasks, config.epochs)
    # the collections hashed (hashlib lets go of the GIL) while the model's library is imported (it holds it)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="collection-hashes") as hashing:
        hashed = hashing.submit(
            lambda: {name: collection_files(path, config.cache_dir) for name, path in collections.items()}
        )
        try:
            make_model = model_factory(config, episodes)
        finally:
            files = hashed.result()
    check_evidence(tasks, {name: listed.files.keys() for name, listed in files.items()}, config.tasks_dir)
    collection_hashes = {domain: listed.digest for domain, listed in files.items()}
    if (refusal := unpriced_refusal(config, make_model)) is not None:
        raise InputError(refusal)
    prompts = load_prompts(config.prompts, config.vision)
    run_id = config.run_id or default_run_id(config)
    check_run_id(run_id)
    if config.label is not None:
        check_label(config.label, "--label")
    check_writable_folder(config.results_dir, "--results-dir")
    folder = RunFolder(config.results_dir / run_id)
    judge = _judge_panel(config, tasks)
    protocol = protocol_of(config, prompts, tasks) | {"model_settings": make_model.settings}
    protocol["output_reserve"] = reply_reserve(config, make_model)  # what the budget keeps, not the flag as given
    if config.closed_book:  # only then, as the judge: the protocol of normal runs stays as it was
        protocol["closed_book"] = True
    limits = request_limits(make_model.provider)
    if config.vision:  # only then: the protocol of bash-only runs stays as it was
        protocol["vision"] = VisionLimits.of(limits).describe()
    if (solved := protocol_plan.solver.protocol(config.solver, tasks, collections, limits)) is not None:
        protocol[solved[0]] = solved[1]  # only for a solver other than the bash agent, as vision
    if judge is not None:  # only then: the protocol of runs without judged tasks stays as it was
        protocol["judge"] = judge.describe()
    resumed = folder.path.exists()
    if resumed:
        record = check_resumable(folder, protocol, protocol_plan.profile_record, files, config.allow_protocol_change)
        check_same_domains(record, config.domain, run_id)
        check_epochs(record, config.epochs)
    invocation = new_invocation()
    backend = backend_of(config, run_id, collections, invocation)
    made = _first_missing(folder.path)
    lock = folder.lock()
    kept, changed = kept_rows(folder, episodes, config.redo) if resumed else ([], 0)
    finished = {row.episode for row in kept}
    pending = [task for task in episodes if task.episode not in finished]
    return RunPlan(
        config=config,
        episodes=episodes,
        pending=pending,
        kept=kept,
        collections=collections,
        collection_hashes=collection_hashes,
        make_model=make_model,
        backend=backend,
        run_id=run_id,
        folder=folder,
        protocol=protocol,
        prompts=prompts,
        lock=lock,
        invocation=invocation,
        resumed=resumed,
        made=made,
        changed_tasks=changed,
        leaks=LeakCheck(tasks, files, config.cache_dir),
        judge=judge,
        solver=protocol_plan.solver,
        profile=protocol_plan.profile_record,
    )


def _first_missing(path: Path) -> Path | None:
    """The top-most folder of PATH that does not exist yet, None when PATH does."""
    missing = None
    for folder in (path, *path.parents):
        if folder.exists():
            return missing
        missing = folder
    return missing


def _selection_of(config: RunConfig) -> str:
    chosen = [f"--{name} {value}" for name, value in (("limit", config.limit), ("shard", config.shard)) if value]
    return f" by {' '.join(chosen)}" if chosen else ""


def failed_episodes(plan: RunPlan) -> int:
    """The selected episodes whose latest row is our or the provider's failure (model, sandbox, harness error),
    not the agent's outcome."""
    selected = {task.episode for task in plan.episodes}
    latest = plan.folder.latest_rows()
    return sum(row.status in INFRASTRUCTURE_FAILURES for key, row in latest.items() if key in selected)


def default_run_id(config: RunConfig) -> str:
    """`STAMP-XXXX_MODEL_DOMAIN`: a short random suffix keeps two runs started in the same second apart (two
    shards, two terminals); a scripted model is named by its file's stem."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    script = scripted_file(config.model)
    spec = f"scripted-{script.stem}" if script is not None else config.model
    model = re.sub(r"[^A-Za-z0-9_.-]+", "-", spec)
    domain = re.sub(r"[^A-Za-z0-9_.-]+", "-", config.domain)
    closed = "_closed-book" if config.closed_book else ""
    return f"{stamp}-{secrets.token_hex(2)}_{model}_{domain}"[: 120 - len(closed)] + closed
