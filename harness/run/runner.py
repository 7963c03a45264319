"""A run: validate everything first (nothing is written on bad input), then run the episodes that are not
finished yet into the run folder. Re-running a `--run-id` resumes it."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import platform
import re
import secrets
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rich.console import Console

import harness
from harness.analysis.end_table import print_end_table
from harness.analysis.summary import summarize, summary_to_dict
from harness.core.errors import InputError, NothingSelected
from harness.core.extras import missing_modules
from harness.core.names import check_label, check_run_id
from harness.core.status import INFRASTRUCTURE_FAILURES
from harness.core.writable import check_writable_folder
from harness.episode import EpisodeContext
from harness.episode.settings import EpisodeSettings
from harness.episode.solvers import Solver
from harness.episode.vision import VisionLimits
from harness.grading import GRADERS, JUDGED
from harness.grading.judge import JudgePanel
from harness.inputs.collections.hashing import CollectionFiles, collection_files, same_collection
from harness.inputs.config import RunConfig, config_to_dict
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
    task_digest,
    task_file,
)
from harness.records.episode_log import RunFacts
from harness.records.events import SandboxFacts
from harness.records.results import ResultRow, ResultsWriter
from harness.records.run_folder import RunFolder, RunLock, write_atomic
from harness.records.run_record import CollectionRecord, ProfileRecord, Resumption, RunRecord
from harness.records.run_settings import ModelSettings, Prices, RunProtocol, RunSettings
from harness.run.action_format_hint import action_format_hint
from harness.run.backends import backend_of, start_backend, watch_opens_possible
from harness.run.epochs import check_epochs, episodes_of
from harness.run.executors.batch import Batch, BatchLimits, BatchState, SweepShare, print_providers
from harness.run.executors.failures import ErrorRateExceeded, ErrorWindow, FailurePolicy
from harness.run.executors.table import executor_of
from harness.run.judge_retry import regrade_judge_errors
from harness.run.judges import JudgeOptions
from harness.run.labels import label_of
from harness.run.leak_check import LeakCheck
from harness.run.leftovers import Leftovers, new_invocation
from harness.run.model_factory import ModelFactory, model_factory, reply_reserve, scripted_file, unpriced_refusal
from harness.run.pinned_packages import resolved_versions
from harness.run.protocol_plan import plan_protocol, profile_changes
from harness.sandboxes.backend import SandboxBackend
from harness.sandboxes.base import Sandbox
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
    """This start of the run (run/leftovers.py), the same on every Ray node."""
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
    prompts = load_prompts(config.prompts)
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
        record = _check_resumable(folder, protocol, protocol_plan.profile_record, files, config.allow_protocol_change)
        _check_same_domains(record, config.domain, run_id)
        check_epochs(record, config.epochs)
    invocation = new_invocation()
    backend = backend_of(config, run_id, collections, invocation)
    made = _first_missing(folder.path)
    lock = folder.lock()
    kept, changed = _kept_rows(folder, episodes, config.redo) if resumed else ([], 0)
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


def _check_resumable(
    folder: RunFolder,
    protocol: dict[str, Any],
    profile: ProfileRecord,
    collections: dict[str, CollectionFiles],
    allow_change: bool,
) -> RunRecord:
    """The run's record, once its protocol and collections are those of this start (or --allow-protocol-change)."""
    if not folder.record_path.is_file():
        raise InputError(f"{folder.path}: exists but holds no run.yaml; choose another --run-id")
    record = folder.read_record()
    recorded = record.protocol.model_dump()
    changes = [
        f"{key} {recorded.get(key)!r} -> {value!r}" for key, value in protocol.items() if recorded.get(key) != value
    ]
    for only_some in ("closed_book", "vision", "zero_shot", "solver"):  # keys only some runs have
        if recorded.get(only_some) and only_some not in protocol:
            changes.append(f"{only_some} {recorded[only_some]!r} -> None")
    changes += profile_changes(record.profile, profile)
    for domain, files in collections.items():
        before = record.collections.get(domain)
        if before is not None and not same_collection(before.hash, files):
            changes.append(f"collection {domain} {before.hash} -> {files.digest}")
    if changes and not allow_change:
        raise InputError(
            f"--run-id {folder.path.name}: the run was made under a different protocol ({'; '.join(changes)}); "
            "resume with the same settings, or pass --allow-protocol-change"
        )
    return record


def _check_same_domains(record: RunRecord, domain: str, run_id: str) -> None:
    """A resume runs what the run selected: another --domain would add its rows to this run's (an import's
    record names no domain)."""
    recorded = record.config.domain
    if recorded is not None and _domain_set(recorded) != _domain_set(domain):
        raise InputError(
            f"--run-id {run_id}: the run was made for --domain {recorded!r}, not {domain!r}; "
            f"resume it with --domain {recorded}, or choose another --run-id"
        )


def _domain_set(spec: str) -> set[str]:
    """`law,fin` as `fin, law` is: the order and spaces do not change what is selected."""
    return {name.strip() for name in spec.split(",") if name.strip()}


def _kept_rows(folder: RunFolder, episodes: list[Task], redo: bool) -> tuple[list[ResultRow], int]:
    """The finished rows a resume keeps, and how many finished episodes changed since (those run again)."""
    if redo:
        return [], 0
    digests = {task.episode: task_digest(task) for task in episodes}
    latest = folder.latest_rows()
    finished = [row for key, row in latest.items() if key in digests and not row.needs_rerun]
    kept = [row for row in finished if row.task_digest == digests[row.episode]]
    return kept, len(finished) - len(kept)


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


def execute_run(
    plan: RunPlan, console: Console, share: SweepShare | None = None, sandbox_facts: dict[str, Any] | None = None
) -> list[ResultRow]:
    """Start the run's backend (`start_run`), unless a sweep did (`sandbox_facts`), then run the pending
    episodes (as one run of a sweep with `share`); raises KeyboardInterrupt after a clean cancel when
    interrupted."""
    try:
        facts = start_run(plan) if sandbox_facts is None else sandbox_facts
        return _execute(plan, console, share, facts)
    finally:
        plan.lock.release()


def start_run(plan: RunPlan) -> dict[str, Any]:
    """Start the planned run's backend: what dead runs left on this host is cleared, and the tool list is
    checked in one of its sandboxes; the sandbox facts the run records. A refusal (`InputError`) removes the
    folders the plan made (`abandon`), so bad input still leaves nothing written."""
    if not plan.solver.needs_sandbox:  # the solver reads the collection on the host
        return {"backend": "none", "reason": plan.solver.without_sandbox()}
    try:
        return start_backend(plan.backend, plan.collections, plan.config.cache_dir)
    except InputError:
        abandon(plan)
        raise


def abandon(plan: RunPlan) -> None:
    """Remove the folders the plan made, before anything but the lock was written in them."""
    if plan.made is None:
        return
    shutil.rmtree(plan.folder.path, ignore_errors=True)
    for folder in (plan.folder.path.parent, *plan.folder.path.parent.parents):
        if plan.made not in (folder, *folder.parents):
            break
        with contextlib.suppress(OSError):  # another run's folder came meanwhile: kept
            folder.rmdir()


def _execute(
    plan: RunPlan, console: Console, share: SweepShare | None, sandbox_facts: dict[str, Any]
) -> list[ResultRow]:
    started = time.monotonic()
    config_hash = "sha256:" + hashlib.sha256(json.dumps(plan.protocol, sort_keys=True).encode()).hexdigest()[:16]
    _announce_resume(plan, console)
    _write_run_record(plan, config_hash, sandbox_facts)
    _warn(plan, console, share)
    leaks_recorded = threading.Event()
    if plan.leaks is not None:
        plan.leaks.when_done(functools.partial(_leaks_found, plan, console, leaks_recorded, share))
    for task in plan.pending:
        plan.folder.keep_previous_attempt(*task.episode)
    cancel = share.cancel if share is not None else threading.Event()
    context = _episode_context(plan, config_hash, cancel, sandbox_facts)
    limits = _batch_limits(plan, console)
    leftovers = Leftovers.of(plan.folder, plan.backend)
    if leftovers is not None:
        leftovers.begin(plan.invocation, console)
    writer = ResultsWriter(plan.folder.results_path)
    try:
        state, results, interrupted = _run_batch(plan, context, limits, writer, console, share)
        if plan.leaks is not None and not interrupted:
            leaks_recorded.wait()  # a finished run's record and console have the check before its end table
    finally:
        if leftovers is not None:
            leftovers.sweep(console)
        writer.close()
        _finish(plan, console, time.monotonic() - started, share)
    if (hint := action_format_hint(plan.config.action_format, results, plan.folder)) is not None:
        console.print(hint, markup=False, highlight=False, soft_wrap=True)
    _end_of_batch(plan.config, state, interrupted, console, share)
    return results


def _announce_resume(plan: RunPlan, console: Console) -> None:
    if not plan.resumed:
        return
    counts = f"{len(plan.kept)} of {len(plan.episodes)} episodes kept, {len(plan.pending)} to run"
    console.print(f"resuming {plan.run_id}: {counts}", markup=False, highlight=False)
    if plan.changed_tasks:
        console.print(
            f"{plan.changed_tasks} finished tasks changed their question or gold since: run again",
            markup=False,
            highlight=False,
        )


def _warn(plan: RunPlan, console: Console, share: SweepShare | None) -> None:
    """What the run's results cannot show: a weaker sandbox, what the model's settings do not know (its price,
    window or reply cap), an agent without the Python libraries of the sandbox image; in a sweep, each once for
    all its runs."""
    warnings = [plan.backend.capabilities.warning, _toolset_warning(plan)]
    for warning in filter(None, [*warnings, *plan.make_model.notes]):
        _print_warning(warning, console, share)


def _print_warning(warning: str, console: Console, share: SweepShare | None) -> None:
    if share is None or share.first_time(warning):
        console.print(f"warning: {warning}", markup=False, highlight=False, soft_wrap=True)


def _toolset_warning(plan: RunPlan) -> str | None:
    """A model's agent in the local sandbox runs this environment's python3: the libraries the Docker image and
    E2B template give it (sandbox_templates/requirements.txt) that this install lacks."""
    if not plan.make_model.paid or not plan.solver.needs_sandbox or not plan.backend.capabilities.host_tools:
        return None
    missing = missing_modules("toolset")
    if not missing:
        return None
    return (
        f"the agent's python3 in the local sandbox lacks {', '.join(missing)} (the Docker image has them): "
        "pip install 'harness[toolset]'"
    )


def _leaks_found(
    plan: RunPlan, console: Console, recorded: threading.Event, share: SweepShare | None, warning: str | None
) -> None:
    """The leakage check's end (at once when it ended before the run started): its warning printed (once in a
    sweep), and recorded in run.yaml in place of `leakage check not finished`."""
    try:
        if warning is not None:
            _print_warning(warning, console, share)
        with contextlib.suppress(OSError):  # run.yaml then keeps saying the check did not finish
            record = plan.folder.read_record()
            if record.leakage_warning != warning:
                plan.folder.write_record(dataclasses.replace(record, leakage_warning=warning))
    finally:
        recorded.set()


def _episode_context(
    plan: RunPlan, config_hash: str, cancel: threading.Event, sandbox_facts: dict[str, Any]
) -> EpisodeContext:
    config = plan.config
    return EpisodeContext(
        settings=EpisodeSettings.of(
            config, plan.protocol["output_reserve"], plan.solver, request_limits(plan.make_model.provider)
        ),
        prompts=plan.prompts,
        make_model=plan.make_model.bind(cancel),
        make_sandbox=functools.partial(_new_sandbox, plan, cancel),
        run_dir=plan.run_dir,
        run_facts=RunFacts(config_hash, harness.__version__),
        collection_hashes=plan.collection_hashes,
        cancel=cancel,
        sandbox_facts=sandbox_facts,
        watch_opens=watch_opens_possible(config, plan.backend.capabilities),
        collections=plan.collections,
        judge=plan.judge,
    )


def _batch_limits(plan: RunPlan, console: Console) -> BatchLimits:
    """The run's limits; sandboxes at once within what the backend allows (said when it lowers them)."""
    config, capabilities = plan.config, plan.backend.capabilities
    max_sandboxes = config.sandboxes_at_once
    cap = capabilities.max_sandboxes
    if cap is not None and max_sandboxes > cap:
        console.print(
            f"--max-sandboxes {max_sandboxes}: at most {cap} at once, {capabilities.cap_reason}",
            markup=False,
            highlight=False,
        )
        max_sandboxes = cap
    return BatchLimits(
        workers=config.workers,
        max_sandboxes=max_sandboxes,
        max_connections=config.connections_at_once,
        max_cost_usd=config.max_cost,
        failures=FailurePolicy(config.retry_errors, config.max_error_rate, config.error_window),
    )


def _run_batch(
    plan: RunPlan,
    context: EpisodeContext,
    limits: BatchLimits,
    writer: ResultsWriter,
    console: Console,
    share: SweepShare | None,
) -> tuple[BatchState, list[ResultRow], bool]:
    """The pending episodes on the run's executor, after the kept rows whose judges failed are graded again:
    the batch's counters, its rows, and whether Ctrl-C interrupted it."""
    config = plan.config
    kept = _regraded(plan, writer, console)
    gates = (plan.make_model.gate,) if plan.make_model.gate else ()
    state = BatchState(
        done=len(kept),
        correct=sum(row.is_correct() for row in kept),
        kept_tokens=sum(row.input_tokens + row.output_tokens for row in kept),
        errors=ErrorWindow(limits.failures),
        gates=gates,
        shared_spend=None if share is None else share.spend,
        cost_unpriced=_cost_unpriced(plan.make_model),
    )
    if share is not None:
        with share.lock:
            share.states.append(state)
    title = f"{label_of(config)} on {config.domain}"
    executor = executor_of(config.executor)
    progress = None if share is None else share.progress
    # a person types at this terminal (--model human): no live bar redrawn under their commands
    shown = Console(quiet=True) if plan.make_model.interactive else console
    batch = Batch(plan.pending, context, limits, writer, shown, title, state, plan.invocation, config, progress)
    results, interrupted = executor(batch)
    return state, results, interrupted


def _cost_unpriced(model: ModelFactory) -> str | None:
    if model.price is not None:
        return None
    return "cost unknown" if model.paid else "no cost"


def _end_of_batch(
    config: RunConfig, state: BatchState, interrupted: bool, console: Console, share: SweepShare | None
) -> None:
    """The batch's last lines (the spend cap, the providers' limits: in a sweep, said once for all its runs at
    its end, `SweepShare.ended`); raises when Ctrl-C or the error rate stopped it."""
    if state.skipped_for_cost:
        console.print(f"stopped at --max-cost {config.max_cost}: {state.skipped_for_cost} episodes not started")
    if share is None:
        print_providers([state], console)
    else:
        with share.lock:
            share.ended.append(state)
    if interrupted:
        raise KeyboardInterrupt
    if state.errors is not None and state.errors.reason is not None:
        raise ErrorRateExceeded(
            f"{config.model}: stopped, {state.skipped_for_errors} episodes not started "
            f"(resume with the same command): {state.errors.reason}"
        )


def _regraded(plan: RunPlan, writer: ResultsWriter, console: Console) -> list[ResultRow]:
    """The kept rows, those whose judges failed graded again first (only the judges are asked)."""
    failed = [row for row in plan.kept if row.needs_regrade]
    if not failed or plan.judge is None:
        return plan.kept
    regraded = {
        row.episode: row for row in regrade_judge_errors(failed, plan.episodes, plan.folder, plan.judge, writer)
    }
    console.print(
        f"graded {len(regraded)} judge errors again: {sum(r.is_correct() for r in regraded.values())} correct",
        markup=False,
        highlight=False,
    )
    return [regraded.get(row.episode, row) for row in plan.kept]


def _collection_record(plan: RunPlan, domain: str) -> CollectionRecord:
    """The collection as named (`--collections-dir`/DOMAIN), its digest, and where it led if a link was on the way."""
    named, mounted = plan.config.collections_dir / domain, plan.collections[domain]
    resolved = None if mounted == Path(os.path.abspath(named)) else str(mounted)
    return CollectionRecord(str(named), plan.collection_hashes[domain], resolved)


def _write_run_record(plan: RunPlan, config_hash: str, sandbox_facts: dict[str, Any]) -> None:
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    collections = {d: _collection_record(plan, d) for d in plan.collections}
    if plan.folder.record_path.exists():  # a resume: keep the original record, note when it was resumed and with what
        record = plan.folder.read_record()
        # changed collections only with --allow-protocol-change: say so, and record what the episodes now run on
        changed = {d: c for d, c in collections.items() if record.collections.get(d) != c}
        protocol = RunProtocol.model_validate(plan.protocol) if record.protocol.model_dump() != plan.protocol else None
        packages = resolved_versions()
        resume = Resumption(
            now,
            len(plan.pending),
            RunSettings.model_validate(config_to_dict(plan.config)),
            plan.changed_tasks,
            changed,
            protocol,
            packages if record.packages and packages != record.packages else {},
        )
        record = dataclasses.replace(
            record, collections=record.collections | changed, resumed=(*record.resumed, resume)
        )
    else:
        record = RunRecord(
            run_id=plan.run_id,
            created=now,
            config=RunSettings.model_validate(config_to_dict(plan.config)),
            tasks=len({(task.domain, task.id) for task in plan.episodes}),
            harness_version=harness.__version__,
            python=platform.python_version(),
            packages=resolved_versions(),
            config_hash=config_hash,
            protocol=RunProtocol.model_validate(plan.protocol),
            model=ModelSettings.model_validate(plan.make_model.settings),
            sandbox=SandboxFacts.model_validate(sandbox_facts),
            collections=collections,
            leakage_warning=None if plan.leaks is None else plan.leaks.warning(timeout=0),
            label=label_of(plan.config),
            prices=None if plan.make_model.price is None else Prices.model_validate(plan.make_model.price.to_dict()),
            profile=plan.profile,
        )
    plan.folder.write_record(record)


def _finish(plan: RunPlan, console: Console, wall_time_s: float, share: SweepShare | None = None) -> None:
    """summary.json and the table from the latest row of every selected task; tasks without one are pending.
    WALL_TIME_S: how long this start of the run took. In a sweep the table waits for the others' (`SweepShare`)."""
    selected = {task.episode: task for task in plan.episodes}
    latest = plan.folder.latest_rows()
    rows = [row for key, row in latest.items() if key in selected]
    pending: dict[str, int] = {}
    for key, task in selected.items():
        if key not in latest:
            pending[task.domain] = pending.get(task.domain, 0) + 1
    summaries = summarize(rows, pending)
    try:
        write_atomic(plan.folder.summary_path, json.dumps(summary_to_dict(summaries), indent=2) + "\n")
    except OSError as error:
        console.print(f"cannot write {plan.folder.summary_path}: {error}", markup=False, highlight=False)
    if share is not None:
        with share.lock:
            share.tables[plan.run_id] = (summaries, f"run {plan.run_id}", wall_time_s)
        return
    print_end_table(summaries, console, f"run {plan.run_id}", wall_time_s)
    console.print(f"results: {plan.run_dir}", markup=False, highlight=False)


def _new_sandbox(plan: RunPlan, cancel: threading.Event, task: Task, name: str) -> Sandbox:
    return plan.backend.new_sandbox(collection_of(task), plan.collections[collection_of(task)], name, cancel)
