"""A run from its plan (run/planning/plan.py): its backend started, the episodes that are not finished yet run
into the run folder, its record, summary and end table written."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import platform
import shutil
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rich.console import Console

import harness
from harness.analysis.end_table import print_end_table
from harness.analysis.summary import summarize, summary_to_dict
from harness.core.errors import InputError
from harness.core.extras import missing_modules
from harness.core.safe_text import for_terminal
from harness.episode import EpisodeContext
from harness.episode.settings import EpisodeSettings
from harness.inputs.config import RunConfig, config_to_dict
from harness.inputs.limits import request_limits
from harness.inputs.retrieval.base import RetrievalFailed
from harness.inputs.tasks import (
    Task,
    collection_of,
)
from harness.records.episode_log import RunFacts
from harness.records.events import SandboxFacts
from harness.records.results import ResultRow, ResultsWriter
from harness.records.run_folder import write_atomic
from harness.records.run_record import CollectionRecord, Resumption, RunRecord
from harness.records.run_settings import ModelSettings, Prices, RunProtocol, RunSettings
from harness.run.action_format_hint import action_format_hint
from harness.run.executors.batch import Batch, BatchLimits, BatchState, SweepShare, print_providers
from harness.run.executors.failures import ErrorRateExceeded, ErrorWindow, FailurePolicy
from harness.run.executors.table import executor_of
from harness.run.judging.judge_retry import regrade_judge_errors
from harness.run.planning.labels import label_of
from harness.run.planning.model_factory import ModelFactory
from harness.run.planning.pinned_packages import resolved_versions
from harness.run.planning.plan import RunPlan
from harness.run.sandboxing.backends import start_backend, watch_opens_possible
from harness.run.sandboxing.leftovers import Leftovers
from harness.sandboxes.base import Sandbox


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
        if not interrupted and share is None:  # a sweep's runs may share them: released when all have ended
            release_solver(plan, console)
    finally:
        if leftovers is not None:
            leftovers.sweep(console)
        writer.close()
        _finish(plan, console, time.monotonic() - started, share)
    if (hint := action_format_hint(plan.config.action_format, results, plan.folder)) is not None:
        console.print(hint, markup=False, highlight=False, soft_wrap=True)
    _end_of_batch(plan.config, state, interrupted, console, share)
    return results


def release_solver(plan: RunPlan, console: Console) -> None:
    """What the solver made for the run's collections released at its end (File Search's stores), each said and
    added to run.yaml's `retrieval_stores` with its cost; a failure to release is said, not the run's."""
    try:
        used = plan.solver.finish(plan.collections.values())
    except RetrievalFailed as error:
        warning = f"warning: the run's File Search stores were not all deleted: {error}"
        console.print(warning, markup=False, highlight=False, soft_wrap=True)
        return
    for store in used:
        console.print(for_terminal(store.said()), markup=False, highlight=False, soft_wrap=True)  # the provider's ids
    if not used:
        return
    try:
        record = plan.folder.read_record()
        plan.folder.write_record(dataclasses.replace(record, retrieval_stores=(*record.retrieval_stores, *used)))
    except (OSError, InputError) as error:
        console.print(f"warning: the stores' cost is not in run.yaml: {error}", markup=False, highlight=False)


def _announce_resume(plan: RunPlan, console: Console) -> None:
    if not plan.resumed:
        return
    counts = f"{len(plan.kept)} of {len(plan.episodes)} episodes kept, {len(plan.pending)} to run"
    console.print(f"resuming {plan.run_id}: {counts}", markup=False, highlight=False)
    if (recalled := plan.solver.resume(plan.folder, [row.episode for row in plan.kept])) is not None:
        console.print(recalled, markup=False, highlight=False)
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
