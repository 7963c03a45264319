"""A sweep: several models in one invocation (`--model A,B,C` or `--sweep FILE.yaml`).

Each model gets a run folder of its own, exactly as a single run's, under one sweep folder that holds
`sweep.yaml` naming them; resume, report, view and replay work on each folder unchanged, and the same command
resumes them all. The runs go on at once (each its own workers and connection bounds), so one slow provider
never idles the others; they share one progress display, one Ctrl-C and the sweep's `--max-cost`.
"""

from __future__ import annotations

import dataclasses
import json
import re
import secrets
import shutil
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console

from harness.analysis.end_table import print_end_tables
from harness.core.abandon import StoppedWithoutWaiting, stopping_note
from harness.core.errors import InputError, read_text_input
from harness.core.names import check_label, check_run_id
from harness.core.yaml_safe import compose_yaml, load_yaml
from harness.inputs.config import RunConfig
from harness.inputs.profiles import load_profile
from harness.records.sweep_record import SweepEntry, SweepRecord, read_sweep_record, write_sweep_record
from harness.run.executors.batch import ResultsUnwritable, SharedSpend, SweepShare, print_providers, progress_bar
from harness.run.executors.failures import ErrorRateExceeded
from harness.run.planning.labels import label_of
from harness.run.planning.model_factory import unpriced_refusal
from harness.run.planning.plan import RunPlan, plan_run
from harness.run.runner import abandon, execute_run, release_solver, start_run

_JOIN_S = 0.2
_ENTRY_FIELDS = (
    "model",
    "args",
    "api_base",
    "api_key_env",
    "max_connections",
    "max_cost",
    "label",
    "profile",
    "domain",
)
"""What a sweep file may set per run (a profile: its settings, where the command gives none; a domain: another import
of the tasks, as a noisy one); every other setting is the command's, the same for every run."""


@dataclass(frozen=True)
class _SweepOutcome:
    """How the sweep ended: the runs stopped for their error rate (with why), and whether Ctrl-C stopped it."""

    stopped: dict[str, str]
    interrupted: bool


def is_sweep(config: RunConfig) -> bool:
    return config.sweep is not None or "," in config.model


def _run_configs(config: RunConfig) -> tuple[Path, list[RunConfig]]:
    """The sweep folder and one config per model (a run id and the sweep folder as its results folder)."""
    if config.sweep is not None and config.model:
        raise InputError("--sweep: give the models in the file or with --model, not both")
    entries = _file_entries(config.sweep) if config.sweep is not None else _list_entries(config.model)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    domain = re.sub(r"[^A-Za-z0-9_.-]+", "-", config.domain)
    sweep_id = config.run_id or f"{stamp}-{secrets.token_hex(2)}_sweep_{domain}"[:120]
    check_run_id(sweep_id)
    folder = config.results_dir / sweep_id
    configs: list[RunConfig] = []
    ids: dict[str, str] = {}
    labels: dict[str, str] = {}
    for where, entry in entries:
        # the command's --max-cost is the sweep's, over all runs; a run's own cap comes from its entry
        run = dataclasses.replace(config, sweep=None, run_id=None, results_dir=folder, max_cost=None, **entry)
        label = label_of(run)
        check_label(label, where)
        run_id = re.sub(r"[^A-Za-z0-9_.@+-]+", "-", label).strip("-.")[:120] or "run"
        if label in labels:
            raise InputError(f"{where}: label {label!r} is also {labels[label]}'s: give one a label of its own")
        if run_id in ids:
            raise InputError(f"{where}: label {label!r} makes the same run folder as {ids[run_id]}: rename one")
        labels[label], ids[run_id] = where, label
        configs.append(dataclasses.replace(run, label=label, run_id=run_id))
    return folder, configs


def _list_entries(models: str) -> list[tuple[str, dict[str, Any]]]:
    names = [name.strip() for name in models.split(",")]
    if not all(names):
        raise InputError(f"--model: {models!r} has an empty name in its comma list")
    return [(f"--model {name}", {"model": name}) for name in names]


def _file_entries(path: Path) -> list[tuple[str, dict[str, Any]]]:
    text = read_text_input(path, "sweep")
    node, data = compose_yaml(text, path), load_yaml(text, path)
    if not isinstance(data, list) or not data or not isinstance(node, yaml.SequenceNode):
        raise InputError(f"{path}:1: a sweep is a non-empty list of models (a name, or a mapping with model: ...)")
    entries = []
    for item, item_node in zip(data, node.value, strict=True):
        where = f"{path}:{item_node.start_mark.line + 1}"
        if isinstance(item, str):
            item = {"model": item}
        if not isinstance(item, dict) or not isinstance(item.get("model"), str) or not item["model"]:
            raise InputError(f"{where}: field 'model': a model name is needed")
        unknown = sorted(set(item) - set(_ENTRY_FIELDS))
        if unknown:
            raise InputError(f"{where}: field '{unknown[0]}': unknown (one of {', '.join(_ENTRY_FIELDS)})")
        entries.append((where, _entry_settings(item, where)))
    return entries


def _entry_settings(item: dict[str, Any], where: str) -> dict[str, Any]:
    named = ("model", "api_base", "api_key_env", "label", "profile", "domain")
    settings = {key: item[key] for key in named if item.get(key) is not None}
    for key in settings:
        if not isinstance(settings[key], str):
            raise InputError(f"{where}: field '{key}': {settings[key]!r} is not a string")
    if "profile" in settings:
        load_profile(settings["profile"], f"{where}: field 'profile':")  # a bad one named by its line
    args = item.get("args") or {}
    if not isinstance(args, dict):
        raise InputError(f"{where}: field 'args': a mapping of provider arguments is needed")
    settings["model_args"] = [f"{key}={json.dumps(value)}" for key, value in args.items()]
    for key, kind in (("max_connections", int), ("max_cost", float)):
        value = item.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or (kind is int and value < 1):
            raise InputError(f"{where}: field '{key}': {value!r} is not a valid {'count' if kind is int else 'USD'}")
        settings[key] = kind(value)
    return settings


def plan_sweep(config: RunConfig) -> tuple[Path, list[RunPlan]]:
    """Every run planned (each checked as a single run is) before any episode starts; on bad input nothing
    stays written: a sweep folder made here is removed again."""
    folder, configs = _run_configs(config)
    new = not folder.exists()
    plans: list[RunPlan] = []
    try:
        for run in configs:
            plans.append(plan_run(run))
            capped = dataclasses.replace(run, max_cost=config.max_cost)  # the sweep's cap needs every price too
            if config.max_cost is not None and (refusal := unpriced_refusal(capped, plans[-1].make_model)):
                raise InputError(refusal)
    except BaseException:
        for plan in plans:
            plan.lock.release()
        if new:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder, plans


def execute_sweep(folder: Path, plans: list[RunPlan], max_cost: float | None, console: Console) -> _SweepOutcome:
    """Every run at once in threads of this process (on Ray: each run's driver in one, sharing one connection),
    once every run's backend started (a refusal stops them all, as on bad input); Ctrl-C (in the main
    thread) cancels them all."""
    facts = _start_all(folder, plans)
    _record(folder, plans, max_cost)
    started_ray = False
    if plans[0].config.executor == "ray":
        from harness.run.executors.ray import connect_once

        first = plans[0].config
        started_ray = connect_once(first.ray_address, first.sandboxes_at_once)
    try:
        outcome = _run_all(plans, facts, max_cost, console)
        if not outcome.interrupted:
            for plan in plans:  # after every run: runs of one collection share its File Search stores
                release_solver(plan, console)
        return outcome
    finally:
        if started_ray:
            from harness.run.executors.ray import disconnect

            disconnect()


def _start_all(folder: Path, plans: list[RunPlan]) -> dict[str, dict[str, Any]]:
    """Each run's sandbox facts, its backend started (`start_run`); on a refusal nothing stays written."""
    facts: dict[str, dict[str, Any]] = {}
    try:
        for plan in plans:
            facts[plan.run_id] = start_run(plan)
    except BaseException:
        for plan in plans:
            abandon(plan)
            plan.lock.release()
        if read_sweep_record(folder) is None:  # a sweep folder this start made
            shutil.rmtree(folder, ignore_errors=True)
        raise
    return facts


def _run_all(
    plans: list[RunPlan], facts: dict[str, dict[str, Any]], max_cost: float | None, console: Console
) -> _SweepOutcome:
    cancel, stopped, interrupted = threading.Event(), {}, False
    with progress_bar(console) as progress:
        share = SweepShare(cancel, progress, SharedSpend(max_cost))

        finished = {plan.run_id: threading.Event() for plan in plans}

        def run(plan: RunPlan) -> None:
            try:
                execute_run(plan, console, share, facts[plan.run_id])
            except (ErrorRateExceeded, ResultsUnwritable) as error:
                stopped[plan.run_id] = str(error)
            except KeyboardInterrupt:
                cancel.set()
            finally:
                finished[plan.run_id].set()

        threads = [threading.Thread(target=run, args=(plan,), name=plan.run_id) for plan in plans]
        for thread in threads:
            thread.start()
        # Waited for through events, not Thread.join/is_alive: a Ctrl-C landing inside join can leave is_alive()
        # False for a thread still writing its run's summary (CPython 3.11), and the process would exit under it.
        # every step inside the try: a first Ctrl-C anywhere here cancels all runs and waits for them, a second
        # stops without waiting, as a single run's does
        while True:
            try:
                waiting = [event for event in finished.values() if not event.is_set()]
                if not waiting:
                    break
                waiting[0].wait(timeout=_JOIN_S)
            except KeyboardInterrupt:
                if interrupted:
                    raise StoppedWithoutWaiting from None
                cancel.set()  # every run's episodes end as cancelled at their next step
                interrupted = True
                with share.lock:
                    running = sum(state.running for state in share.states)
                progress.console.print(stopping_note(running), markup=False, highlight=False)
    print_end_tables([share.tables[plan.run_id] for plan in plans if plan.run_id in share.tables], console)
    print_providers(share.ended, console)  # after every run: each provider's last state
    return _SweepOutcome(stopped, interrupted or cancel.is_set())


def _record(folder: Path, plans: list[RunPlan], max_cost: float | None) -> None:
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    runs = [SweepEntry(plan.run_id, plan.config.label or plan.config.model, plan.config.model) for plan in plans]
    earlier = read_sweep_record(folder)
    created = earlier.created if earlier is not None else now
    resumed = (*earlier.resumed, now) if earlier is not None else ()
    write_sweep_record(folder, SweepRecord(folder.name, created, runs, max_cost, resumed))
