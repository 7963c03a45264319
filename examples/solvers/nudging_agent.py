"""A variant of the bash agent that overrides one step: after each command, once few turns are left, the
observation the model reads ends with a nudge to answer. Everything else (the query step, budgets, records,
grading) is the bash agent's.

Run it from the folder that holds this file, with any model (the oracle included):

    python -m harness --model oracle --domain demo --solver nudging_agent:NudgingAgent

and its one argument: `--solver-arg nudge_at=5` (the turns left from which the nudge is added).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from harness.episode.solvers import AgentLoop, BashAgent, EpisodeInputs, SolverArgumentError
from harness.models.base import ModelReply

NUDGE = "Few turns are left: if you know the answer, give it now in <answer></answer> tags."


class NudgingLoop(AgentLoop):
    """The bash agent's loop; only `execute` differs."""

    nudge_at = 3

    def execute(self, reply: ModelReply, command: str) -> None:
        super().execute(reply, command)  # runs the command and appends what the model will read
        last = self.messages[-1]
        if self.budget.turns_left <= self.nudge_at and isinstance(last.get("content"), str):
            last["content"] += "\n" + NUDGE


class NudgingAgent(BashAgent):
    name = "nudging-agent"
    loop = NudgingLoop
    arguments: ClassVar[Mapping[str, str]] = {"nudge_at": "the turns left from which observations nudge (default 3)"}

    def __init__(self, args: Mapping[str, str]) -> None:
        super().__init__(args)
        try:
            self.nudge_at = int(self.args.get("nudge_at", "3"))
        except ValueError:
            raise SolverArgumentError(f"nudge_at={self.args['nudge_at']!r}: a whole number of turns") from None

    def start_loop(self, episode: EpisodeInputs) -> AgentLoop:
        loop = super().start_loop(episode)
        assert isinstance(loop, NudgingLoop)
        loop.nudge_at = self.nudge_at
        return loop
