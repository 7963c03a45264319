"""Solvers: the ways an episode is solved, as plug-ins (base.py), by name or import path (registry.py). A solver of
one's own subclasses `Solver`, or `BashAgent` with its own `AgentLoop` (docs/guide/plugins.md)."""

from harness.episode.solvers.agent_loop import AgentLoop as AgentLoop
from harness.episode.solvers.agent_loop import LoopSettings
from harness.episode.solvers.base import EpisodeInputs, Solver
from harness.episode.solvers.base import SolverArgumentError as SolverArgumentError
from harness.episode.solvers.bash_agent import BashAgent
from harness.episode.solvers.registry import make_solver, solver_class

__all__ = ["BashAgent", "EpisodeInputs", "LoopSettings", "Solver", "make_solver", "solver_class"]
"""What the other packages use; `AgentLoop` and `SolverArgumentError` are here too, for a solver of one's own."""
