"""The bash agent (AGORA's protocol, the default): the model explores the collection in the task's sandbox with one
bash command per turn (and, with `--vision`, a view_image tool), until it answers or a budget ends it."""

from __future__ import annotations

from typing import Any, ClassVar

from harness.core.status import Outcome
from harness.episode.solvers.agent_loop import AgentLoop
from harness.episode.solvers.base import EpisodeInputs, Solver
from harness.episode.solvers.tools import AgentTool, BashTool, ViewImageTool
from harness.episode.vision import ImageViewer, VisionLimits


class BashAgent(Solver):
    """Runs `loop` (`AgentLoop`); a variant sets `loop` to a subclass overriding one step."""

    name = "bash-agent"
    loop: ClassVar[type[AgentLoop]] = AgentLoop

    def protocol(self, spec: str, tasks: Any, collections: Any, limits: Any = None) -> tuple[str, Any] | None:
        """The built-in agent records nothing (its runs' protocol stays as it was); a variant records its name."""
        return None if type(self) is BashAgent else super().protocol(spec, tasks, collections, limits)

    def solve(self, episode: EpisodeInputs) -> Outcome:
        loop = self.start_loop(episode)
        try:
            return loop.run()
        finally:
            if loop.viewer is not None:  # its decoding worker
                loop.viewer.close()

    def start_loop(self, episode: EpisodeInputs) -> AgentLoop:
        """The episode's loop, of class `loop`, with its tools and, when the agent can look, its viewer."""
        assert episode.sandbox is not None, "the bash agent needs a sandbox"
        vision = episode.loop.vision
        viewer = ImageViewer(episode.sandbox, episode.images, VisionLimits.of(episode.limits)) if vision else None
        return self.loop(
            episode.task,
            episode.model,
            episode.sandbox,
            episode.budget,
            episode.prompts,
            episode.log,
            episode.loop,
            viewer,
            self.tools(vision),
        )

    @classmethod
    def tools(cls, vision: bool) -> list[AgentTool]:
        """The tools the model is offered and the loop runs: bash, and view_image when the agent can look. A variant
        adds or removes one here."""
        return [BashTool(), ViewImageTool()] if vision else [BashTool()]
