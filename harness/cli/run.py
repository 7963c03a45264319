"""`python -m harness --model M --domain D ...` (no command name): check every input, then run the batch."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from harness.cli.command import EXIT_FAILED, EXIT_NOTHING_SELECTED, EXIT_OK, Session
from harness.cli.parser import Parser
from harness.core.errors import NothingSelected
from harness.inputs.config import RunConfig, add_setting_flags
from harness.inputs.config_sources import build_config, load_yaml_settings
from harness.sandboxes.registry import backend_names

if TYPE_CHECKING:
    from harness.run.planning.plan import RunPlan


def build_parser() -> argparse.ArgumentParser:
    """The run's flags, generated from `RunConfig`, and --config; only the flags given are parsed into settings."""
    parser = Parser(
        prog="python -m harness",
        description="Run an LLM agent on every task of a domain inside an isolated sandbox and grade the answers. "
        "Without a command this runs a batch; the commands below each have their own --help.",
        epilog="Exit codes: 0 every selected episode ended as the agent's outcome; 1 some ended as a model, "
        "sandbox or harness error (or the run was stopped for its error rate); 2 bad input, nothing written; 3 no "
        "task selected (an empty --shard); 130 Ctrl-C. Example: python -m harness --model oracle --domain demo",
        argument_default=argparse.SUPPRESS,
    )
    add_setting_flags(parser, {"sandbox": "{" + ",".join(backend_names()) + "}|MODULE:CLASS"})
    parser.add_argument(
        "--config", type=Path, metavar="FILE.yaml", help="read any of these settings from YAML; flags win"
    )
    return parser


def handle(arguments: argparse.Namespace, session: Session) -> int:
    settings = vars(arguments)
    config_file = settings.pop("config", None)
    file_settings = load_yaml_settings(config_file) if config_file else {}
    from harness.run.planning.model_factory import import_provider_library_early

    if isinstance(model := settings.get("model", file_settings.get("model")), str):
        import_provider_library_early(model.split(","))  # checked as a setting below; only a head start here
    config = build_config(file_settings, settings, {"sandbox": tuple(backend_names())})
    from harness.run.sweep import is_sweep

    if is_sweep(config):
        return _sweep(config, session)
    from harness.run.executors.batch import ResultsUnwritable
    from harness.run.executors.failures import ErrorRateExceeded
    from harness.run.planning.plan import plan_run
    from harness.run.runner import execute_run

    try:
        plan = plan_run(config)
    except NothingSelected as error:
        _say(f"nothing to run: {error}")
        return EXIT_NOTHING_SELECTED
    session.kept = f"finished episodes are in {plan.run_dir}"
    try:
        execute_run(plan, session.console)
    except ResultsUnwritable as error:
        _say(f"error: {error}; the rows written so far are kept")
        return EXIT_FAILED
    except ErrorRateExceeded as error:
        _say(f"error: {error}")
        return EXIT_FAILED
    return _failures_exit([plan])


def _say(line: str) -> None:
    Console(stderr=True).print(line, markup=False, soft_wrap=True)


def _failures_exit(plans: list[RunPlan]) -> int:
    """EXIT_OK when every selected episode ended as the agent's outcome; EXIT_FAILED, with a line saying how
    many, when any ended as our or the provider's failure."""
    from harness.run.planning.plan import failed_episodes

    failed = {plan.run_id: failed_episodes(plan) for plan in plans}
    if not any(failed.values()):
        return EXIT_OK
    where = ", ".join(f"{count} in {run_id}" for run_id, count in failed.items() if count)
    _say(f"failed: episodes that ended as a model, sandbox or harness error ({where}): resume to run them again")
    return EXIT_FAILED


def _sweep(config: RunConfig, session: Session) -> int:
    """Several models at once: exit 130 after Ctrl-C, 1 when a model was stopped for its error rate."""
    from harness.run.sweep import execute_sweep, plan_sweep

    try:
        folder, plans = plan_sweep(config)
    except NothingSelected as error:
        _say(f"nothing to run: {error}")
        return EXIT_NOTHING_SELECTED
    session.kept = f"finished episodes are in {folder}"
    outcome = execute_sweep(folder, plans, config.max_cost, session.console)
    for run_id, reason in outcome.stopped.items():
        _say(f"error: {run_id}: {reason}")
    session.console.print(f"sweep: {folder} ({len(plans)} runs)", markup=False, highlight=False)
    if outcome.interrupted:
        raise KeyboardInterrupt
    return EXIT_FAILED if outcome.stopped else _failures_exit(plans)
