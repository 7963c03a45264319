"""What Gemini CLI and Claude Code share as installed agents: a release from npm shown read-only at `/run/agent`,
one command in the task's sandbox whose model calls reach the runner's proxy on the socket, its shell tool the run's
`bash` under the agent's own name, and its stream of events (`--output-format stream-json`) kept as its transcript
and read for how it ended."""

from __future__ import annotations

from abc import abstractmethod
from pathlib import Path
from typing import Any, ClassVar

from harness.core.status import Outcome
from harness.episode.proxy import ModelProxy
from harness.episode.solvers.agent_files import INSTALLED_AGENT_HOME, budget_ending, kept_transcript
from harness.episode.solvers.base import EpisodeInputs, Solver
from harness.episode.solvers.npm_release import NpmRelease
from harness.episode.solvers.tools import AgentTool, BashTool
from harness.inputs.limits import RequestLimits
from harness.inputs.tasks import Task
from harness.sandboxes.base import ExecResult
from harness.sandboxes.model_socket import SOCKET_NAME

TRANSCRIPT = f"{INSTALLED_AGENT_HOME}/transcript.jsonl"
"""Where the agent's command writes its stream of events, in its home."""


class StreamJsonAgent(Solver):
    needs_sandbox = True
    model_socket = True
    release: ClassVar[NpmRelease]
    shell_tool: ClassVar[str]
    """The agent's name for its shell tool, which is the run's `bash`."""

    @classmethod
    def tools(cls, vision: bool) -> list[AgentTool]:
        """The run's model is offered bash, as the agent's one tool (its shell, under the agent's own name)."""
        return [BashTool()]

    def agent_folder(self) -> Path | None:
        return self.release.shown()

    def protocol(
        self, spec: str, tasks: list[Task], collections: dict[str, Path], limits: RequestLimits | None = None
    ) -> tuple[str, Any] | None:
        """The agent's release (`agent_record`) beside the solver's name; a refusal (one line) when the install is
        missing or not the release pinned."""
        self.release.folder()
        return "solver", {"name": spec, "args": self.args, "agent": self.agent_record()}

    @abstractmethod
    def agent_record(self) -> dict[str, Any]:
        """What run.yaml records of the agent: its packages and their releases."""

    def solve(self, episode: EpisodeInputs) -> Outcome:
        sandbox, folder = episode.sandbox, episode.socket_folder
        assert sandbox is not None and folder is not None, "an installed agent needs its sandbox and socket"
        self.beside_socket(folder)
        aliases = {self.shell_tool: BashTool.name}
        tools = self.tools(False)
        with ModelProxy(folder / SOCKET_NAME, episode.model, episode.budget, episode.log, tools, aliases) as proxy:
            result = sandbox.execute(self.command(episode), episode.budget.seconds_left)
        transcript = kept_transcript(episode, TRANSCRIPT, self.name, self.release.version)
        if (ended := budget_ending(proxy.ended, result)) is not None:
            return ended
        return self.outcome(transcript, result)

    def beside_socket(self, folder: Path) -> None:
        """Put what the agent needs of ours into the socket's FOLDER (read-only at /run/model): nothing here."""

    @abstractmethod
    def command(self, episode: EpisodeInputs) -> str:
        """The agent's one command in its sandbox, its events written to `TRANSCRIPT`."""

    @abstractmethod
    def outcome(self, transcript: list[Any], result: ExecResult) -> Outcome:
        """How the agent ended by itself, from its events and its command's result."""
