"""`--executor ray` on a node: one episode as a Ray task, with the model factory, the sandbox backend and the
collections checked once per worker process and run; what it returns to the driver (a row, or why it did not
start)."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.core.errors import InputError
from harness.episode import EpisodeContext, run_episode
from harness.episode.settings import EpisodeSettings
from harness.episode.throttles import Slots
from harness.grading.judge import JudgePanel
from harness.inputs.collections.hashing import collection_hash
from harness.inputs.config import RunConfig
from harness.inputs.prompts import PromptSet, load_prompts
from harness.inputs.tasks import Task, collection_of, collection_path
from harness.models.base import Model
from harness.models.concurrency import GATE_SOURCE
from harness.records.episode_log import RunFacts
from harness.records.results import ResultRow
from harness.run.executors.coordinator import CoordinatorGate, CoordinatorPacer, CoordinatorSlot
from harness.run.executors.ray_event_stream import StreamedLog
from harness.run.planning.model_factory import model_factory
from harness.run.sandboxing.backends import backend_of, start_backend, watch_opens_possible
from harness.sandboxes.backend import SandboxBackend

_CANCEL_POLL_S = 0.5
"""How often a running episode asks the coordinator whether the run was cancelled."""


@dataclass(frozen=True)
class NodeSpec:
    """What a node needs to rebuild the episode context, put in Ray's object store once per run; paths
    (collections, scripts, prompts) are the driver's and must be the same on every node."""

    config: RunConfig
    """The run's settings, whole: the node builds the run's model factory and sandbox backend from them, once."""
    episode: EpisodeSettings
    """What each episode reads of them."""
    run_id: str
    run_facts: RunFacts
    collection_hashes: dict[str, str]
    """Collection name (a task's own, or its domain's) -> content hash."""
    sandbox_facts: dict[str, Any]
    invocation: str
    """The driver's start of the run (`Batch.invocation`): every node's sandboxes carry it."""
    judge: JudgePanel | None = None


@dataclass(frozen=True)
class NotStarted:
    reason: str
    """`cancelled` (Ctrl-C), `cost` (--max-cost reached) or `errors` (--max-error-rate passed)."""


@dataclass(frozen=True)
class NodeRefused:
    message: str


@dataclass
class _NodeSetup:
    backend: SandboxBackend
    prompts: PromptSet
    node_id: str
    make_model: Callable[[Task], Model]
    """The run's model factory, built once on this node (its checks passed)."""
    collections: dict[str, Path] = field(default_factory=dict)
    """Domain -> collection path, once its hash was checked on this node."""


_SETUPS: dict[str, _NodeSetup] = {}
"""Per worker process and run: the model factory built, the backend checked and the collections verified once."""


def run_on_node(
    task: Task, spec: NodeSpec, coordinator: Any, events: Any, attempt: int
) -> ResultRow | NotStarted | NodeRefused:
    """One episode as a Ray task. Returns its row (never raises, like `run_episode`)."""
    import ray

    reason = ray.get(coordinator.may_start.remote())
    if reason is not None:
        return NotStarted(reason)
    try:
        setup = _setup(spec)
        collection = _checked_collection(setup, spec, collection_of(task))
    except InputError as error:
        return NodeRefused(f"node {_node_name()}: {error}")
    cancel = threading.Event()
    config = spec.config
    backend = setup.backend
    rate = backend.creations_per_s
    if rate is not None:  # the service's creation rate is the cluster's: paced by the coordinator
        backend = backend.paced_by(CoordinatorPacer(coordinator, rate))
    context = EpisodeContext(
        settings=spec.episode,
        prompts=setup.prompts,
        make_model=setup.make_model,
        make_sandbox=lambda task, name: backend.new_sandbox(collection_of(task), collection, name, cancel),
        run_dir=config.results_dir / spec.run_id,
        run_facts=dataclasses.replace(spec.run_facts, ray_node=setup.node_id),
        collection_hashes=spec.collection_hashes,
        cancel=cancel,
        slots=Slots(threading.BoundedSemaphore(1 << 20), CoordinatorSlot(coordinator, slot_owner(task, attempt))),
        sandbox_facts=spec.sandbox_facts,
        watch_opens=watch_opens_possible(config, setup.backend.capabilities),
        open_log=lambda task: StreamedLog(events, task.episode, attempt),
        collections={collection_of(task): collection},
        judge=spec.judge,
    )
    finished = threading.Event()
    watcher = threading.Thread(target=_watch_cancel, args=(coordinator, cancel, finished), daemon=True)
    watcher.start()
    # the episode's model calls wait at the cluster's provider limits, in the coordinator
    gates = GATE_SOURCE.set(lambda key, maximum: CoordinatorGate(coordinator, key, maximum))
    try:
        row = run_episode(task, context, attempt)
    finally:
        GATE_SOURCE.reset(gates)
        finished.set()
    # before this node takes its next episode, so no episode starts past --max-cost, as on one machine
    ray.get(coordinator.add_cost.remote(row.cost_usd or 0.0))
    return row


def _setup(spec: NodeSpec) -> _NodeSetup:
    """The node's model and backend, checked and started like the driver's (API key, bwrap usable, Docker
    image, E2B templates, the tool list): a node that fails refuses before its first episode."""
    import ray

    key = f"{spec.run_id}:{spec.run_facts.config_hash}:{spec.invocation}"
    if key not in _SETUPS:
        make_model = model_factory(spec.config, [])  # with the model's own checks (its API key, a scripted file)
        collections = {
            name: collection_path(spec.config.collections_dir, name, spec.config.follow_links)
            for name in spec.collection_hashes
        }
        templates = spec.sandbox_facts.get("templates")  # E2B: the driver's, not the collections read again
        backend = backend_of(spec.config, spec.run_id, collections, spec.invocation, templates)
        start_backend(backend, collections, spec.config.cache_dir, f" on node {_node_name()}")
        node_id = ray.get_runtime_context().get_node_id()
        _SETUPS[key] = _NodeSetup(
            backend, load_prompts(spec.config.prompts, spec.config.vision), node_id, make_model.build
        )
    return _SETUPS[key]


def _checked_collection(setup: _NodeSetup, spec: NodeSpec, domain: str) -> Path:
    if domain not in setup.collections:
        path = collection_path(spec.config.collections_dir, domain, spec.config.follow_links)
        digest, expected = collection_hash(path, spec.config.cache_dir), spec.collection_hashes[domain]
        if digest != expected:
            raise InputError(
                f"collection {domain} at {path} has hash {digest}, the driver's has {expected}; every node needs "
                "the same collections at the same path"
            )
        setup.collections[domain] = path
    return setup.collections[domain]


def _watch_cancel(coordinator: Any, cancel: threading.Event, finished: threading.Event) -> None:
    import ray

    while not finished.wait(_CANCEL_POLL_S):
        if ray.get(coordinator.is_cancelled.remote()):
            cancel.set()
            return


def _node_name() -> str:
    import ray

    return f"{ray.util.get_node_ip_address()} (node id {ray.get_runtime_context().get_node_id()[:16]})"


def slot_owner(task: Task, attempt: int) -> str:
    """Who holds connection slots in the coordinator: one attempt of one episode (released whole when its node is
    lost)."""
    return f"{task.domain}/{task.id}@{task.epoch}#{attempt}"
