"""The protocol a run follows: its benchmark profile (given, or the task set's) applied to the settings, and its
solver built with its arguments (the profile's for that solver, then `--solver-arg`), all checked before
anything is written."""

from __future__ import annotations

from dataclasses import dataclass

from harness.core.errors import InputError
from harness.episode.solvers import Solver, make_solver
from harness.inputs.config import RunConfig
from harness.inputs.profiles import (
    DEFAULT_PROFILE,
    Profile,
    apply_profile,
    graded_as_profiled,
    load_profile,
    profile_names,
)
from harness.inputs.tasks import Task
from harness.records.run_record import ProfileRecord

__all__ = ["ProtocolPlan", "plan_protocol", "profile_changes", "task_set_profile"]


@dataclass(frozen=True)
class ProtocolPlan:
    config: RunConfig
    """The run's settings with the profile's applied."""
    profile: Profile
    profile_record: ProfileRecord
    """What run.yaml records of the profile (name, version, digest, the settings given over it)."""
    solver: Solver
    tasks: list[Task]
    """The selected tasks, graded as the profile grades them."""


def task_set_profile(tasks: list[Task]) -> str:
    """The profile of a task set: its benchmark's, when every task was imported from one benchmark that ships a
    profile (`metadata.source`), else AGORA's."""
    sources = {task.metadata.get("source") for task in tasks}
    source = next(iter(sources)) if len(sources) == 1 else None
    return source if isinstance(source, str) and source in profile_names() else DEFAULT_PROFILE


def plan_protocol(config: RunConfig, tasks: list[Task]) -> ProtocolPlan:
    """CONFIG under its profile (`--profile`, else the task set's), and its solver."""
    profile = load_profile(config.profile or task_set_profile(tasks))
    config, overrides = apply_profile(config, profile, config.given)
    args = dict(profile.solvers.get(config.solver, {}))
    for item in config.solver_args:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InputError(f"--solver-arg {item}: expected KEY=VALUE")
        args[key] = value
    solver = make_solver(config.solver, args)
    if solver.model_socket:
        _check_installed_agent(config, solver.agent_backends)
    path = None if profile.shipped else str(profile.path)
    record = ProfileRecord(profile.name, profile.version, profile.digest, path, tuple(overrides), profile.report)
    return ProtocolPlan(config, profile, record, solver, graded_as_profiled(tasks, profile))


def _check_installed_agent(config: RunConfig, backends: tuple[str, ...]) -> None:
    """An agent inside its sandbox calls the run's model through the proxy, which offers the model the run's tools:
    a model called with the bash tool, on a backend that mounts the model's socket and has the agent (BACKENDS,
    the solver's: mini-swe-agent's are local, which runs this Python environment, and Docker, whose image has its
    own, sandbox_templates/agents.txt. Not E2B: its sandboxes run elsewhere and cannot reach a socket on the
    runner's host)."""
    solver = f"--solver {config.solver}"
    if config.action_format != "toolcall" or config.vision:
        raise InputError(
            f"{solver}: the agent's model is called with its bash tool: --action-format toolcall, no --vision"
        )
    if config.closed_book or config.sandbox not in backends:
        where = "--closed-book" if config.closed_book else f"--sandbox {config.sandbox}"
        raise InputError(f"{solver}: not with {where} (it runs on --sandbox {', '.join(backends)})")


def profile_changes(recorded: ProfileRecord | None, planned: ProfileRecord) -> list[str]:
    """How the profile of a resume differs from the run's (a run from before profiles records none: nothing)."""
    if recorded is None:
        return []
    return [
        f"profile {key} {getattr(recorded, key)!r} -> {getattr(planned, key)!r}"
        for key in ("name", "version", "digest")
        if getattr(recorded, key) != getattr(planned, key)
    ]
