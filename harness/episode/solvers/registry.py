"""Solvers by name: the built-in ones here, one line each; any other named by its import path,
`package.module:Class` (`--solver`), with no edit to this package."""

from __future__ import annotations

from collections.abc import Mapping

from harness.core.errors import InputError
from harness.core.plugins import is_import_path, load_class
from harness.episode.solvers.base import Solver, SolverArgumentError
from harness.episode.solvers.bash_agent import BashAgent
from harness.episode.solvers.claude_code import ClaudeCode
from harness.episode.solvers.gemini_cli import GeminiCli
from harness.episode.solvers.mini_swe_agent import MiniSweAgent
from harness.episode.solvers.rag import RagBaseline
from harness.episode.solvers.workflow import Workflow
from harness.episode.solvers.zero_shot import ZeroShot

__all__ = ["make_solver", "solver_class"]

_SOLVERS: dict[str, type[Solver]] = {
    BashAgent.name: BashAgent,
    ZeroShot.name: ZeroShot,
    MiniSweAgent.name: MiniSweAgent,
    GeminiCli.name: GeminiCli,
    ClaudeCode.name: ClaudeCode,
    RagBaseline.name: RagBaseline,
    Workflow.name: Workflow,
}


def solver_class(spec: str, where: str = "--solver") -> type[Solver]:
    """The solver SPEC names: a registered name or an import path; an unknown one is one line naming the known."""
    if spec in _SOLVERS:
        return _SOLVERS[spec]
    if not is_import_path(spec):
        raise InputError(f"{where} {spec}: no such solver (one of {', '.join(_SOLVERS)}, or 'package.module:Class')")
    found: type[Solver] = load_class(spec, Solver, where)
    return found


def make_solver(spec: str, args: Mapping[str, str], where: str = "--solver") -> Solver:
    """SPEC's solver with ARGS (`--solver-arg`), checked: a refused argument is one line naming the solver."""
    kind = solver_class(spec, where)
    try:
        return kind(args)
    except SolverArgumentError as error:
        raise InputError(f"--solver-arg: {where} {spec}: {error}") from None
