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
import time
from collections import Counter
from typing import Any

from rich.console import Console
from rich.progress import Progress

from harness.core.abandon import stopping_note
from harness.core.episode_key import EpisodeKey
from harness.core.errors import InputError
from harness.core.status import Status
from harness.episode import failed_row
from harness.inputs.tasks import Task
from harness.records.events import EpisodeEndEvent
from harness.records.results import ResultRow
from harness.records.run_folder import RunFolder
from harness.records.trajectory import event_line
from harness.run.executors.attempts import Attempts, Retry
from harness.run.executors.batch import Batch, BatchLimits, ResultsUnwritable, progress_bar
from harness.run.executors.coordinator import RunCoordinator
from harness.run.executors.ray_event_stream import TrajectoryFiles
from harness.run.executors.ray_node import NodeRefused, NodeSpec, NotStarted, run_on_node, slot_owner

SANDBOX_RESOURCE = "harness_sandbox"
"""The custom resource a node declares: how many episodes (sandboxes) it runs at once."""
_MAX_ATTEMPTS = 2
"""An episode whose node is lost runs again once; a second loss ends it as `sandbox_error`."""
_WAIT_S = 0.2
_COORDINATOR_THREADS = 256
"""Connection-slot waits block a thread of the coordinator for at most 0.2 s each."""


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
        self.episode = ray.remote(run_on_node).options(num_cpus=0, resources={SANDBOX_RESOURCE: 1}, max_retries=0)
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
        self.logs = TrajectoryFiles(RunFolder(context.run_dir))
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
        outcome: ResultRow | NotStarted | NodeRefused
        try:
            outcome = ray.get(ref)
        except RayTaskError as error:  # our code on the node raised (run_episode never does): a bug of ours
            outcome = self._ended_here(task, Status.HARNESS_ERROR, str(error))
        except RayError as error:  # the node or its worker process was lost mid-episode
            ray.get(self.coordinator.release_all.remote(slot_owner(task, attempt)))
            self.losses[key] += 1
            if self.losses[key] < _MAX_ATTEMPTS and not self.interrupted:
                self._submit(task, attempt + 1)
                return
            detail = f"the Ray node running the episode was lost ({attempt} attempts): {type(error).__name__}"
            outcome = self._ended_here(task, Status.SANDBOX_ERROR, f"{detail}: {error}")
        if isinstance(outcome, NotStarted):
            if outcome.reason == "cost":
                self.state.skipped_for_cost += 1
            if outcome.reason == "errors":
                self.state.skipped_for_errors += 1
            return
        if isinstance(outcome, NodeRefused):
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
        self.logs.end(task.episode, event_line(end.kind, **end.to_dict()), _MAX_ATTEMPTS)
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
