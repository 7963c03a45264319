"""What a solver is: the way an episode is solved, a plug-in with named steps.

A solver gets one episode's inputs (`EpisodeInputs`: the task, the throttled model, the budget, the trajectory,
the prompts and, when it needs one, the started sandbox) and returns the episode's `Outcome`; the lifecycle around
it (sandbox slot, grading, the row) is the same for every solver. The built-in ones are in `registry.py`; any
other is named by its import path, `package.module:Class` (`--solver`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from harness.core.episode_key import EpisodeKey
from harness.core.retrieval_stores import StoreUse
from harness.core.status import Outcome
from harness.episode.budget import Budget
from harness.episode.solvers.agent_loop import LoopSettings
from harness.episode.solvers.tools import AgentTool
from harness.inputs.limits import RequestLimits, request_limits
from harness.inputs.prompts import PromptSet
from harness.inputs.tasks import Task
from harness.models.base import Model
from harness.records.image_store import ImageStore
from harness.records.run_folder import RunFolder
from harness.records.trajectory import TrajectoryLog
from harness.sandboxes.base import Sandbox


class SolverArgumentError(ValueError):
    """A `--solver-arg` the solver does not take, or a value it refuses (the run's input error)."""


@dataclass(frozen=True)
class EpisodeInputs:
    """Everything a solver gets for one episode."""

    task: Task
    model: Model
    """The run's model, throttled by the run's connection slots and the provider's limits."""
    budget: Budget
    log: TrajectoryLog
    prompts: PromptSet
    loop: LoopSettings
    """The agent's rules: the action format, the command timeout, the format errors that end it, vision."""
    images: ImageStore
    """Where the episode's images go (by hash, in the run folder)."""
    collection: Path | None
    """The task's collection on the host (what a solver without a sandbox reads)."""
    sandbox: Sandbox | None = None
    """The episode's started sandbox; None for a solver that `needs_sandbox` is False."""
    limits: RequestLimits = field(default_factory=lambda: request_limits(None))
    """What one request to the run's provider may carry (its images and their bytes)."""
    socket_folder: Path | None = None
    """The host folder the sandbox shows at /run/model (sandboxes/model_socket.py), where the solver serves the
    model on a unix socket; None unless the solver says `model_socket`."""


class Solver(ABC):
    """One way of solving an episode. A subclass sets `name`, says whether it needs a sandbox and which `tools` the
    model is offered, checks its arguments in `__init__`, and implements `solve`."""

    name: ClassVar[str] = ""
    """The registry's name (an out-of-tree solver: the import path it was named by is recorded instead)."""
    needs_sandbox: ClassVar[bool] = True
    """False: the episode starts no sandbox (the solver reads the collection on the host, as the prompt's input)."""
    model_socket: ClassVar[bool] = False
    """True: the sandbox mounts a folder for the model's socket before it starts (an installed agent, whose model
    calls come back through the runner's proxy: episode/proxy/)."""
    agent_backends: ClassVar[tuple[str, ...]] = ("local", "docker")
    """With `model_socket`: the backends its agent runs on (any other is refused before the run)."""
    arguments: ClassVar[Mapping[str, str]] = {}
    """The `--solver-arg` names it takes, each with what it means (for the one-line refusal of any other)."""

    def __init__(self, args: Mapping[str, str]) -> None:
        unknown = sorted(set(args) - set(self.arguments))
        if unknown:
            takes = ", ".join(self.arguments) or "none"
            raise SolverArgumentError(f"'{unknown[0]}' is not an argument of this solver (it takes: {takes})")
        self.args = dict(args)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and isinstance(other, Solver) and other.args == self.args

    def __hash__(self) -> int:
        return hash((type(self), tuple(sorted(self.args.items()))))

    def protocol(
        self, spec: str, tasks: list[Task], collections: dict[str, Path], limits: RequestLimits | None = None
    ) -> tuple[str, Any] | None:
        """The key and value run.yaml's protocol records of this solver (SPEC: how the run named it), after checking
        that every task can be solved so under the provider's request LIMITS (an `InputError` names the first that
        cannot); None records nothing (the bash agent, so the protocol of its runs stays as it was)."""
        return "solver", {"name": spec, "args": self.args}

    def resume(self, folder: RunFolder, finished: list[EpisodeKey]) -> str | None:
        """On resume, before any episode runs: what the solver takes back from the FINISHED episodes' records in
        FOLDER (none by default); a line saying what, or None."""
        return None

    @classmethod
    def tools(cls, vision: bool) -> list[AgentTool]:
        """The tools the model is offered (VISION: the run lets the agent look); none: the model is asked without
        tools, and its reply is read as text."""
        return []

    def agent_folder(self) -> Path | None:
        """A host folder the sandbox shows read-only at /run/agent before it starts (an installed agent's own
        install, sandboxes/model_socket.py); None: none."""
        return None

    def without_sandbox(self) -> str:
        """What the run records as its sandbox when the solver needs none."""
        return f"the solver {self.name} starts no sandbox"

    def finish(self, collections: Iterable[Path]) -> list[StoreUse]:
        """At the run's end (not after an interruption): release what the solver made for the run's COLLECTIONS;
        what each thing held and cost, released or kept (run.yaml's `retrieval_stores`). Nothing by default."""
        return []

    @abstractmethod
    def solve(self, episode: EpisodeInputs) -> Outcome:
        """The episode, to its outcome: every way it ends is an `Outcome` (the agent's limits and errors, a model's
        or sandbox's failure as its status); a bug of the solver's may raise, for the episode to record."""
