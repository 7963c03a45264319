"""`--executor ray`: each episode is one Ray task on some node of a cluster; this process (the driver) stays
the single writer of the run folder.

- Events: an episode on a node sends each trajectory event, as it happens, to a queue actor placed beside
  the driver; the driver drains it into `episodes/...`. The row comes back as the task's result and is
  appended and fsynced by the driver, after every event of that episode is written.
- Sandboxes: each episode needs one unit of the custom resource `harness_sandbox`, which a node declares
  (`ray start --resources '{"harness_sandbox": 8}'`): `--max-sandboxes` per node.
- Connections, the spend cap and Ctrl-C: one `RunCoordinator` actor beside the driver (executors/coordinator.py).
- A lost node (or worker process): its episode runs again elsewhere, once; a second loss is a
  `sandbox_error` row. Only the attempt whose result arrives is recorded, so nothing is recorded twice.
- Collections: a node checks the content hash of a domain's collection before its first episode there and
  refuses, naming itself, when it differs or is missing; the driver then stops the run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress

from harness.core.abandon import stopping_note
from harness.core.episode_key import EpisodeKey
from harness.core.errors import InputError
from harness.core.reply import Usage
from harness.core.status import Status
from harness.episode import EpisodeContext, failed_row, run_episode
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
from harness.records.events import EpisodeEndEvent, Event, ModelCallEvent
from harness.records.results import ResultRow
from harness.records.run_folder import RunFolder
from harness.records.trajectory import KeptEvents, TrajectoryWriter, event_line
from harness.run.backends import backend_of, start_backend, watch_opens_possible
from harness.run.executors.attempts import Attempts, Retry
from harness.run.executors.batch import Batch, BatchLimits, ResultsUnwritable, progress_bar
from harness.run.executors.coordinator import CoordinatorGate, CoordinatorPacer, CoordinatorSlot, RunCoordinator
from harness.run.model_factory import model_factory
from harness.sandboxes.backend import SandboxBackend

SANDBOX_RESOURCE = "harness_sandbox"
"""The custom resource a node declares: how many episodes (sandboxes) it runs at once."""
_MAX_ATTEMPTS = 2
"""An episode whose node is lost runs again once; a second loss ends it as `sandbox_error`."""
_WAIT_S = 0.2
_CANCEL_POLL_S = 0.5
_COORDINATOR_THREADS = 256
"""Connection-slot waits block a thread of the coordinator for at most 0.2 s each."""


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
class _NotStarted:
    reason: str
    """`cancelled` (Ctrl-C), `cost` (--max-cost reached) or `errors` (--max-error-rate passed)."""


@dataclass(frozen=True)
class _NodeRefused:
    message: str


def run_batch_on_ray(batch: Batch) -> tuple[list[ResultRow], bool]:
    """The batch on a Ray cluster (see `Executor`). Raises `InputError` when a node refuses (its collection)."""
    import ray

    connected_here = _connect(batch.config.ray_address, batch.limits)
    try:
        driver = _Driver(batch)
        return driver.run(batch.console, batch.title, batch.progress)
    finally:
        if connected_here:
            ray.shutdown()


def connect_once(address: str | None, max_sandboxes: int) -> bool:
    """For a sweep: join the cluster before its runs start, so they all share this connection (each run's batch
    then finds Ray connected); True when this call started Ray (the caller shuts it down)."""
    return _connect(address, BatchLimits(1, max_sandboxes, 1, None))


def disconnect() -> None:
    import ray

    ray.shutdown()


def _connect(address: str | None, limits: BatchLimits) -> bool:
    """Join the cluster (or start a local instance on loopback); True when this call started Ray."""
    import ray

    if ray.is_initialized():
        return False
    try:
        if address is None:
            ray.init(
                resources={SANDBOX_RESOURCE: limits.max_sandboxes},
                _node_ip_address="127.0.0.1",
                include_dashboard=False,
                log_to_driver=False,
            )
        else:
            ray.init(address=address, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as error:
        raise InputError(f"--ray-address {address}: cannot join the Ray cluster: {error}") from None
    if not ray.cluster_resources().get(SANDBOX_RESOURCE):
        ray.shutdown()
        raise InputError(
            f"--ray-address {address}: no node of the cluster declares the {SANDBOX_RESOURCE} resource; start "
            f"each node with ray start ... --resources '{{\"{SANDBOX_RESOURCE}\": N}}' (N sandboxes at once)"
        )
    return True


class _Driver:
    def __init__(self, batch: Batch):
        import ray
        from ray.util.queue import Queue
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        # the shared actors live on the driver's node: losing a worker node must not lose them
        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        context, limits, state = batch.context, batch.limits, batch.state
        self.coordinator: Any = (
            ray.remote(RunCoordinator)
            .options(num_cpus=0, max_concurrency=_COORDINATOR_THREADS, scheduling_strategy=here)
            .remote(limits.max_connections, limits.max_cost_usd, batch.config.model_timeout)
        )
        self.events = Queue(actor_options={"num_cpus": 0, "scheduling_strategy": here})
        self.episode = ray.remote(_run_on_node).options(num_cpus=0, resources={SANDBOX_RESOURCE: 1}, max_retries=0)
        spec = NodeSpec(
            batch.config,
            context.settings,
            context.run_dir.name,
            context.run_facts,
            context.collection_hashes,
            context.sandbox_facts,
            batch.invocation,
            context.judge,
        )
        self.spec = ray.put(spec)  # once per run; each episode's task refers to it
        self.tasks, self.writer, self.state = batch.tasks, batch.writer, state
        self.attempts = Attempts(limits.failures, state, RunFolder(context.run_dir))
        self.cancel = context.cancel
        """Set from outside this driver's thread (a sweep's Ctrl-C): stops the run as Ctrl-C here does."""
        self.losses: Counter[EpisodeKey] = Counter()
        self.delayed: list[tuple[float, Retry]] = []
        """Episodes to run again (`--retry-errors`) once their backoff is over: (due, retry)."""
        self.logs = _TrajectoryFiles(RunFolder(context.run_dir))
        self.running: dict[Any, tuple[Task, int]] = {}
        self.results: list[ResultRow] = []
        self.interrupted = False
        self.refused: str | None = None
        self.unwritable: OSError | None = None
        self.console = batch.console
        """Where the run's first infrastructure failure is said (the progress display's, once it is up)."""

    def run(self, console: Console, title: str, shared: Progress | None = None) -> tuple[list[ResultRow], bool]:
        import ray

        state = self.state
        # the providers' limits are the cluster's, kept in the coordinator: shown from there
        state.gate_view = lambda keys: ray.get(self.coordinator.gate_states.remote(keys))
        with contextlib.nullcontext(shared) if shared else progress_bar(console) as progress:
            bar = progress.add_task(title, total=len(self.tasks) + state.done, completed=state.done, **state.counts())
            self.console = progress.console
            for task in self.tasks:
                self._submit(task, 1)
            while self.running or self.delayed:
                try:
                    if self.cancel.is_set() and not self.interrupted:
                        self._stop()
                        self.interrupted = True
                    self._submit_due()
                    if not self.running:
                        time.sleep(_WAIT_S)
                        continue
                    ready, _ = ray.wait(list(self.running), num_returns=len(self.running), timeout=_WAIT_S)
                    self._take_events()
                    for ref in ready:
                        self._collect(ref)
                    # inside the try: a Ctrl-C that lands here must stop the nodes too, not leave the loop
                    progress.update(bar, completed=state.done, **state.counts())
                except KeyboardInterrupt:
                    if self.interrupted:  # a second Ctrl-C: stop waiting for the nodes
                        for ref in self.running:
                            ray.cancel(ref, force=True)
                        break
                    self._stop()
                    self.interrupted = True
                    progress.console.print(stopping_note(len(self.running)), markup=False, highlight=False)
        self.logs.close_all()
        final = ray.get(self.coordinator.gate_states.remote(state.gates))
        state.gate_view = lambda keys: final  # for the run's last lines, after the cluster is left
        if self.refused:
            raise InputError(self.refused)
        if self.unwritable is not None:
            raise ResultsUnwritable(f"cannot write {self.writer.path}: {self.unwritable}")
        return self.results, self.interrupted

    def _submit(self, task: Task, attempt: int) -> None:
        ref = self.episode.remote(task, self.spec, self.coordinator, self.events, attempt)
        self.running[ref] = (task, attempt)

    def _submit_due(self) -> None:
        """Retries whose backoff is over start; once interrupted, none does and each keeps its failed row."""
        now = time.monotonic()
        due = [entry for entry in self.delayed if entry[0] <= now or self.interrupted]
        self.delayed = [entry for entry in self.delayed if entry not in due]
        for _, retry in due:
            if self.interrupted:
                self._last(retry.row)
            else:
                self._submit(retry.task, self.attempts.start(retry))

    def _stop(self) -> None:
        """Every node's running episodes end as `cancelled` at their next step; queued ones do not start."""
        self.coordinator.cancel.remote()

    def _take_events(self) -> None:
        try:
            started, tokens = self.logs.take(self.events)
        except OSError as error:  # a full disk: stop like the local batch does
            self._unwritable(error)
            return
        with self.state.lock:
            self.state.running += started
        self.state.called(tokens)

    def _collect(self, ref: Any) -> None:
        import ray
        from ray.exceptions import RayError, RayTaskError

        task, attempt = self.running.pop(ref)
        key = task.episode
        outcome: ResultRow | _NotStarted | _NodeRefused
        try:
            outcome = ray.get(ref)
        except RayTaskError as error:  # our code on the node raised (run_episode never does): a bug of ours
            outcome = self._ended_here(task, Status.HARNESS_ERROR, str(error))
        except RayError as error:  # the node or its worker process was lost mid-episode
            ray.get(self.coordinator.release_all.remote(_owner(task, attempt)))
            self.losses[key] += 1
            if self.losses[key] < _MAX_ATTEMPTS and not self.interrupted:
                self._submit(task, attempt + 1)
                return
            detail = f"the Ray node running the episode was lost ({attempt} attempts): {type(error).__name__}"
            outcome = self._ended_here(task, Status.SANDBOX_ERROR, f"{detail}: {error}")
        if isinstance(outcome, _NotStarted):
            if outcome.reason == "cost":
                self.state.skipped_for_cost += 1
            if outcome.reason == "errors":
                self.state.skipped_for_errors += 1
            return
        if isinstance(outcome, _NodeRefused):
            if self.refused is None:
                self.refused = outcome.message
                self._stop()
            return
        with self.state.lock:
            self.state.running -= self.logs.close(key)
        retry = self.attempts.ended(task, outcome, attempt, self.interrupted)
        if retry is not None:
            self.delayed.append((time.monotonic() + retry.backoff_s, retry))
            return
        self._last(outcome)

    def _last(self, row: ResultRow) -> None:
        """The episode's last attempt ended with `row`: recorded, and counted against the error rate and the
        sweep's spend cap."""
        self._record(row)
        errors = self.state.errors
        self.state.ended(row, self.console)
        if errors is not None and errors.tripped:
            self.coordinator.stop_starting.remote("errors")
        if self.state.shared_spend is not None and self.state.shared_spend.reached():
            self.coordinator.stop_starting.remote("cost")  # the sweep's cap, over all of its runs

    def _ended_here(self, task: Task, status: Status, detail: str) -> ResultRow:
        """The row of an episode whose node never returned one; its trajectory gets the end the node could not
        write."""
        row = failed_row(task, status, detail)
        end = EpisodeEndEvent(row=row, submission=None)
        self.logs.end(task.episode, event_line(end.kind, **end.to_dict()))
        return row

    def _record(self, row: ResultRow) -> None:
        if self.unwritable is not None:
            return
        try:
            self.writer.append(row)
        except OSError as error:
            self._unwritable(error)
            return
        self.results.append(row)
        self.state.written(row)

    def _unwritable(self, error: OSError) -> None:
        if self.unwritable is None:
            self.unwritable = error
            self._stop()


@dataclass
class _TrajectoryFiles:
    """The driver's side of the event stream: one open trajectory per episode, the latest attempt's."""

    folder: RunFolder
    open: dict[EpisodeKey, tuple[int, TrajectoryWriter]] = field(default_factory=dict)
    started: set[EpisodeKey] = field(default_factory=set)
    """Episodes whose first event arrived and whose row did not yet: the ones running."""

    def take(self, events: Any) -> tuple[int, int]:
        """Write every queued event; returns how many episodes started since (their first event), and the tokens
        of the model calls among the events."""
        count = events.size()
        if not count:
            return 0, 0
        started = tokens = 0
        for key, attempt, line, call_tokens in events.get_nowait_batch(count):  # the driver is the only consumer
            current = self.open.get(key)
            tokens += call_tokens  # a lost attempt's calls were made too
            if current is not None and current[0] > attempt:
                continue  # a late event of a lost attempt
            if current is None or current[0] < attempt:
                if current is not None:  # the attempt on a lost node: kept under previous/
                    current[1].close()
                    self.folder.keep_previous_attempt(*key)
                if key not in self.started:
                    self.started.add(key)
                    started += 1
                self.open[key] = (attempt, TrajectoryWriter(self.folder.trajectory_path(*key)))
            self.open[key][1].append(line)
        return started, tokens

    def end(self, key: EpisodeKey, line: str) -> None:
        """The end of an episode the driver itself ended (its node was lost twice)."""
        if key not in self.open:
            self.open[key] = (_MAX_ATTEMPTS, TrajectoryWriter(self.folder.trajectory_path(*key)))
        self.open[key][1].append(line)

    def close(self, key: EpisodeKey) -> int:
        """Close (fsync) the episode's trajectory; 1 if it was counted as running, else 0."""
        current = self.open.pop(key, None)
        if current is not None:
            current[1].close()
        if key in self.started:
            self.started.discard(key)
            return 1
        return 0

    def close_all(self) -> None:
        """After a second Ctrl-C: what the nodes sent so far stays, fsynced; those episodes stay unfinished."""
        for key in list(self.open):
            self.close(key)


# --- on the nodes ---------------------------------------------------------------------------------------


class _StreamedLog(KeptEvents):
    """An episode's trajectory on a node: each event goes to the driver as it happens."""

    def __init__(self, events: Any, key: EpisodeKey, attempt: int):
        super().__init__()
        self._events, self._key, self._attempt = events, key, attempt

    def _send(self, line: str, event: Event) -> None:
        """The line, and the call's tokens for the driver's live count (it writes lines, reading none)."""
        usage = event.response.usage if isinstance(event, ModelCallEvent) else Usage()
        self._events.put((self._key, self._attempt, line, usage.input_tokens + usage.output_tokens))

    def close(self) -> None:
        """The driver closes the file when the row arrives."""


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


def _run_on_node(
    task: Task, spec: NodeSpec, coordinator: Any, events: Any, attempt: int
) -> ResultRow | _NotStarted | _NodeRefused:
    """One episode as a Ray task. Returns its row (never raises, like `run_episode`)."""
    import ray

    reason = ray.get(coordinator.may_start.remote())
    if reason is not None:
        return _NotStarted(reason)
    try:
        setup = _setup(spec)
        collection = _checked_collection(setup, spec, collection_of(task))
    except InputError as error:
        return _NodeRefused(f"node {_node_name()}: {error}")
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
        slots=Slots(threading.BoundedSemaphore(1 << 20), CoordinatorSlot(coordinator, _owner(task, attempt))),
        sandbox_facts=spec.sandbox_facts,
        watch_opens=watch_opens_possible(config, setup.backend.capabilities),
        open_log=lambda task: _StreamedLog(events, task.episode, attempt),
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
        _SETUPS[key] = _NodeSetup(backend, load_prompts(spec.config.prompts), node_id, make_model.build)
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


def _owner(task: Task, attempt: int) -> str:
    return f"{task.domain}/{task.id}@{task.epoch}#{attempt}"
