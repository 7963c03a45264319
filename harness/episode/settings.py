"""What an episode reads of the run's settings: its budgets and the loop's rules, built once per run from the
`RunConfig` (an episode, and each Ray node's episodes, get this, never the whole configuration)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from harness.episode.budget import Budget
from harness.episode.solvers import BashAgent, LoopSettings, Solver
from harness.inputs.config import RunConfig
from harness.inputs.limits import RequestLimits, request_limits
from harness.models.base import Model


@dataclass(frozen=True)
class EpisodeSettings:
    model: str
    """The model as given (`--model`): episode_start records it."""
    max_turns: int
    time_limit_s: float
    context_window: int | None
    """The context budget in tokens; None: the model's own."""
    output_reserve: int
    loop: LoopSettings
    """The action format, the command timeout and the format errors that end the episode."""
    solver: Solver = field(default_factory=lambda: BashAgent({}))
    """How the episode is solved (episode/solvers/), its arguments checked."""
    request_limits: RequestLimits = field(default_factory=lambda: request_limits(None))
    """What one request to the run's provider may carry."""
    max_episode_cost: float | None = None
    """USD an episode may spend on its model calls (`--max-episode-cost`); None: no cap."""

    @classmethod
    def of(
        cls, config: RunConfig, output_reserve: int, solver: Solver, limits: RequestLimits | None = None
    ) -> EpisodeSettings:
        """The run's settings, with the context budget's reserve for the reply as the run resolved it and the
        request LIMITS of the provider its model calls."""
        loop = LoopSettings(config.action_format, config.command_timeout, config.max_format_errors, config.vision)
        return cls(
            config.model,
            config.max_turns,
            config.time_limit,
            config.context_window,
            output_reserve,
            loop,
            solver,
            limits or request_limits(None),
            config.max_episode_cost,
        )

    def budget(self, model: Model, cancel: threading.Event) -> Budget:
        """A fresh budget for an episode of `model` (whose context window is the default of ours)."""
        window = self.context_window or model.context_window
        return Budget(
            self.max_turns,
            self.time_limit_s,
            window,
            self.output_reserve,
            cancel,
            model.count_tokens,
            cost_limit_usd=self.max_episode_cost,
        )
