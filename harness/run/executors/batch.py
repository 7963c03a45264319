"""What every executor shares: the batch it is handed, its limits, the live counters and progress bar, and
how a finished row is counted (threads of this process, or a Ray cluster: `Executor`)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Column

from harness.analysis.summary import DomainSummary
from harness.episode import EpisodeContext
from harness.inputs.config import RunConfig
from harness.inputs.tasks import Task
from harness.models.concurrency import GateState, gate_states
from harness.models.in_flight import IN_FLIGHT
from harness.records.results import ResultRow, ResultsWriter
from harness.run.executors.failures import ErrorWindow, FailurePolicy
from harness.run.executors.progress_columns import NarrowLine, PlainLine, Remaining

_WIDE = 120
"""Console columns from which the progress line shows everything."""


class ResultsUnwritable(OSError):
    """results.jsonl could not be appended to (a full disk): the batch stopped; written rows are kept."""


@dataclass(frozen=True)
class BatchLimits:
    workers: int
    """Episodes in progress at once."""
    max_sandboxes: int
    """Sandboxes alive at once (an episode waits for a slot before its sandbox starts)."""
    max_connections: int
    """Model calls in flight at once, across episodes."""
    max_cost_usd: float | None
    """Stop starting new episodes once the run's spend reaches this (None: no cap)."""
    failures: FailurePolicy = field(default_factory=lambda: FailurePolicy(0, 1.0, 1))
    """Retries of infrastructure failures and the error rate that stops the model (default: none, never)."""


@dataclass
class SharedSpend:
    """The spend of every run of a sweep, against the sweep's own `--max-cost` (beside each model's cap)."""

    max_cost_usd: float | None
    cost_usd: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reached(self) -> bool:
        with self.lock:
            return self.max_cost_usd is not None and self.cost_usd >= self.max_cost_usd

    def add(self, usd: float) -> None:
        with self.lock:
            self.cost_usd += usd


@dataclass(frozen=True)
class SweepShare:
    """What the runs of one sweep share: one cancel flag (Ctrl-C stops all), one progress display (a line per
    model), the sweep's spend cap, the warnings said (each once, not once per model), the runs' counters (the
    Ctrl-C note counts their running episodes), their end tables (printed together, with the same columns) and
    their providers' limits (each provider's line once: `print_providers`)."""

    cancel: threading.Event
    progress: Progress
    spend: SharedSpend
    warned: set[str] = field(default_factory=set)
    states: list[BatchState] = field(default_factory=list)
    tables: dict[str, tuple[list[DomainSummary], str, float]] = field(default_factory=dict)
    """Run id -> its end table (summaries, title, wall time)."""
    ended: list[BatchState] = field(default_factory=list)
    """The runs that reached their last lines: their providers' limits are said once, at the sweep's end."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def first_time(self, warning: str) -> bool:
        """Whether WARNING is new to the sweep (and is now said)."""
        with self.lock:
            new = warning not in self.warned
            self.warned.add(warning)
            return new


@dataclass
class BatchState:
    """Counters the progress display reads; updated under `lock` by the episode threads."""

    done: int = 0
    correct: int = 0
    running: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    kept_tokens: int = 0
    """The tokens of the episodes a resume kept: shown, never counted against this start's spend cap."""
    call_tokens: int = 0
    """The tokens of every call that returned, counted as it returns (on Ray, as its event reaches the driver)."""
    skipped_for_cost: int = 0
    skipped_for_errors: int = 0
    errors: ErrorWindow | None = None
    """The model's recent infrastructure failures (`--max-error-rate`); None: never stopped for them."""
    gates: tuple[str, ...] = ()
    """The provider gates the run's calls go through, shown with their limits and 429s."""
    gate_view: Callable[[tuple[str, ...]], list[GateState]] = gate_states
    """Where their states are read: this process's gates, or (Ray) the run's coordinator."""
    shared_spend: SharedSpend | None = None
    """The sweep's spend, when the run is one of a sweep's."""
    cost_unpriced: str | None = None
    """What the line shows for the cost of a model without a price (`cost unknown`, where the table shows `–`,
    never `$0.00`); None: the dollars spent."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def may_start(self, limits: BatchLimits, cancel: threading.Event) -> bool:
        """Whether another episode may start: not cancelled, the spend cap not reached (counted if it is)."""
        with self.lock:
            if cancel.is_set():
                return False
            over_sweep_cap = self.shared_spend is not None and self.shared_spend.reached()
            if over_sweep_cap or (limits.max_cost_usd is not None and self.cost_usd >= limits.max_cost_usd):
                self.skipped_for_cost += 1
                return False
            if self.errors is not None and self.errors.tripped:
                self.skipped_for_errors += 1
                return False
            return True

    def spent(self, row: ResultRow) -> None:
        """A finished episode's tokens and cost, counted as soon as it ends: the spend cap reads them."""
        with self.lock:
            self.input_tokens += row.input_tokens
            self.output_tokens += row.output_tokens
            self.cost_usd += row.cost_usd or 0.0
        if self.shared_spend is not None:
            self.shared_spend.add(row.cost_usd or 0.0)

    def called(self, tokens: int) -> None:
        """A model call returned, its episode still going: the live token count has it at once."""
        with self.lock:
            self.call_tokens += tokens

    def written(self, row: ResultRow) -> None:
        """A finished episode's row, in results.jsonl: the progress bar counts it."""
        with self.lock:
            self.done += 1
            self.correct += row.is_correct()

    def ended(self, row: ResultRow, console: Console) -> None:
        """An episode's last attempt ended: the error window counts it at once, before another one starts; the
        run's first infrastructure failure is said on CONSOLE as it happens (its reason, not only its count)."""
        if self.errors is not None and (first := self.errors.record(row)) is not None:
            console.print(f"{row.domain}/{row.task_id}: {first}", markup=False, highlight=False, soft_wrap=True)

    def counts(self) -> dict[str, Any]:
        return {
            "correct": self.correct,
            "running": self.running,
            "tokens": f"{self.kept_tokens + max(self.call_tokens, self.input_tokens + self.output_tokens):,}",
            "cost": self.cost_unpriced or f"${self.cost_usd:.2f}",
            "providers": _provider_limits(self.gate_view(self.gates)),
            "calls": IN_FLIGHT.view(self.gates).describe(),
        }


def _provider_limits(gates: list[GateState]) -> str:
    """Each provider's adaptive in-flight limit and its 429s (`models/concurrency.py`), for the progress bar."""
    return "".join(f" · limit {g.limit}/{g.maximum} {g.rate_limited}×429" for g in gates)


def print_providers(states: list[BatchState], console: Console) -> None:
    """A line per provider gate of these runs, once each: the runs of a sweep calling one provider share its
    gate (on Ray, each run's coordinator has its own, read at the run's end), so their lines would repeat."""
    lines = {f"provider {gate.describe()}" for state in states for gate in state.gate_view(state.gates)}
    for line in sorted(lines):
        console.print(line, markup=False, highlight=False)


def progress_bar(console: Console) -> Progress:
    """The live bar both executors show (local threads, Ray); below `_WIDE` columns, `NarrowLine`; where output
    is not a terminal, `PlainLine` (printed once, at the end)."""
    if not console.is_terminal:
        return Progress(PlainLine(console.width), console=console)
    if console.width < _WIDE:
        return Progress(NarrowLine(console.width), console=console)
    name = Column(no_wrap=True, overflow="ellipsis", max_width=console.width // 3)  # cut before a number is
    columns = (
        TextColumn("{task.description}", style="bold", markup=False, table_column=name),  # names as written
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("correct {task.fields[correct]} · running {task.fields[running]}{task.fields[calls]}"),
        TextColumn("· {task.fields[tokens]} tokens · {task.fields[cost]}{task.fields[providers]}", markup=False),
        TimeElapsedColumn(),
        Remaining(),
    )
    return Progress(*columns, console=console)


@dataclass(frozen=True)
class Batch:
    """The pending episodes of a run, and where their rows and progress go."""

    tasks: list[Task]
    context: EpisodeContext
    limits: BatchLimits
    writer: ResultsWriter
    console: Console
    title: str
    state: BatchState
    invocation: str
    """This start of the run, in its E2B sandboxes' metadata: a Ray node makes its backend with it."""
    config: RunConfig
    """The run's settings, whole: only a Ray node reads them, to build the run's model factory and sandbox
    backend there (an episode reads its `EpisodeSettings`)."""
    progress: Progress | None = None
    """A display the batch adds its line to (a sweep's, shared by its runs); None: the batch shows its own."""


class Executor(Protocol):
    def __call__(self, batch: Batch) -> tuple[list[ResultRow], bool]:
        """Run every task; the rows in finishing order, and whether Ctrl-C interrupted the batch. Raises
        `ResultsUnwritable` (after stopping every episode) when a row cannot be written."""
