"""Solvers: the ways an episode is solved, as plug-ins (base.py), by name or import path (registry.py)."""

from harness.episode.solvers.agent_loop import AgentLoop, LoopSettings
from harness.episode.solvers.base import EpisodeInputs, Solver, SolverArgumentError
from harness.episode.solvers.bash_agent import BashAgent
from harness.episode.solvers.registry import DEFAULT_SOLVER, make_solver, solver_class, solver_names
from harness.episode.solvers.zero_shot import ZeroShot

__all__ = [
    "DEFAULT_SOLVER",
    "AgentLoop",
    "BashAgent",
    "EpisodeInputs",
    "LoopSettings",
    "Solver",
    "SolverArgumentError",
    "ZeroShot",
    "make_solver",
    "solver_class",
    "solver_names",
]
