"""`python -m harness --model M --domain D ...` (no command name): check every input, then run the batch."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from harness.cli.command import EXIT_FAILED, EXIT_OK, Session
from harness.inputs.config import RunConfig, add_setting_flags, build_config, load_yaml_settings


def build_parser() -> argparse.ArgumentParser:
    """The run's flags, generated from `RunConfig`, and --config; only the flags given are parsed into settings."""
    parser = argparse.ArgumentParser(
        prog="python -m harness",
        description="Run an LLM agent on every task of a domain inside an isolated sandbox and grade the answers. "
        "Without a command this runs a batch; the commands below each have their own --help.",
        epilog="Example: python -m harness --model oracle --domain demo",
        argument_default=argparse.SUPPRESS,
    )
    add_setting_flags(parser)
    parser.add_argument(
        "--config", type=Path, metavar="FILE.yaml", help="read any of these settings from YAML; flags win"
    )
    return parser


def handle(arguments: argparse.Namespace, session: Session) -> int:
    settings = vars(arguments)
    config_file = settings.pop("config", None)
    file_settings = load_yaml_settings(config_file) if config_file else {}
    config = build_config(file_settings, settings)
    from harness.run.sweep import is_sweep

    if is_sweep(config):
        return _sweep(config, session)
    from harness.run.executors.batch import ResultsUnwritable
    from harness.run.executors.failures import ErrorRateExceeded
    from harness.run.runner import execute_run, plan_run

    plan = plan_run(config)
    session.kept = f"finished episodes are in {plan.run_dir}"
    try:
        execute_run(plan, session.console)
    except ResultsUnwritable as error:
        Console(stderr=True).print(f"error: {error}; the rows written so far are kept", markup=False, soft_wrap=True)
        return EXIT_FAILED
    except ErrorRateExceeded as error:
        Console(stderr=True).print(f"error: {error}", markup=False, soft_wrap=True)
        return EXIT_FAILED
    return EXIT_OK


def _sweep(config: RunConfig, session: Session) -> int:
    """Several models at once: exit 130 after Ctrl-C, 1 when a model was stopped for its error rate."""
    from harness.run.sweep import execute_sweep, plan_sweep

    folder, plans = plan_sweep(config)
    session.kept = f"finished episodes are in {folder}"
    outcome = execute_sweep(folder, plans, config.max_cost, session.console)
    for run_id, reason in outcome.stopped.items():
        Console(stderr=True).print(f"error: {run_id}: {reason}", markup=False, soft_wrap=True)
    session.console.print(f"sweep: {folder} ({len(plans)} runs)", markup=False, highlight=False)
    if outcome.interrupted:
        raise KeyboardInterrupt
    return EXIT_FAILED if outcome.stopped else EXIT_OK
