"""`python -m harness ...`: argument parsing only; the work happens in runner.py."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from rich.console import Console

from harness.config import build_config, load_yaml_settings
from harness.errors import InputError

EXIT_INPUT_ERROR = 2
EXIT_INTERRUPTED = 130


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m harness",
        description="Run an LLM agent on every task of a domain inside an isolated sandbox and grade the answers.",
        epilog="Example: python -m harness --model oracle --domain demo. Other commands (each with --help): "
        "python -m harness replay | report | view | sandbox build | sandbox cleanup | collection build "
        "| collection stats",
        argument_default=argparse.SUPPRESS,
    )
    add = parser.add_argument
    add(
        "--model",
        help="a litellm provider/model string (deepseek/..., openai/..., anthropic/..., gemini/..., hosted_vllm/...), "
        "an alias from harness/models/aliases.yaml (e.g. deepseek-v4), oracle, scripted:FILE.yaml or replay:PATH",
    )
    add("--api-base", metavar="URL", help="provider endpoint, e.g. http://127.0.0.1:8000/v1 for a local server")
    add("--api-key-env", metavar="NAME", help="environment variable holding the API key (default: the provider's own)")
    add(
        "--model-arg",
        dest="model_args",
        action="append",
        metavar="KEY=VALUE",
        help="passed to the provider, repeatable (e.g. reasoning_effort=high)",
    )
    add("--temperature", type=float, help="sampling temperature (default: 1.0)")
    add("--max-retries", type=int, metavar="N", help="retries of rate limits, 5xx, timeouts, connection errors (5)")
    add("--model-timeout", type=float, metavar="SECONDS", help="per model call, retries included (default: 600)")
    add("--domain", help="a domain name, a comma-separated list, or 'all'")
    add("--task-id", dest="task_ids", action="append", metavar="ID", help="run only this task (repeatable)")
    add("--limit", type=int, metavar="N", help="at most N tasks per domain")
    add("--tasks-dir", type=Path, help="task files <domain>.jsonl (default: tasks/, env HARNESS_TASKS_DIR)")
    add(
        "--collections-dir",
        type=Path,
        help="domain collections <domain>/ (default: collections/, env HARNESS_COLLECTIONS_DIR)",
    )
    add("--results-dir", type=Path, help="where run folders go (default: results/)")
    add("--run-id", help="run folder name (default: time_model_domain); an existing run is resumed")
    add("--sandbox", choices=["local", "docker", "e2b"], help="sandbox backend (default: local, bubblewrap)")
    add("--image", help="Docker image for --sandbox docker (default: the one built from sandbox_templates/)")
    add("--workers", type=int, metavar="N", help="episodes run at once (default: 1)")
    add("--max-sandboxes", type=int, metavar="N", help="sandboxes alive at once (default: --workers)")
    add("--max-connections", type=int, metavar="N", help="model calls in flight at once (default: --workers)")
    add("--max-cost", type=float, metavar="USD", help="stop starting new episodes once the run's spend reaches it")
    add("--shard", metavar="I/N", help="run only part I of N of the task list (deterministic, for many machines)")
    add("--redo", action="store_true", help="on resume, run finished episodes again too")
    add(
        "--allow-protocol-change",
        action="store_true",
        help="resume a run although its model, budgets or grader differ from run.yaml",
    )
    add("--max-turns", type=int, metavar="N", help="model calls per episode (default: 200)")
    add(
        "--time-limit",
        type=float,
        metavar="SECONDS",
        help="wall clock per episode, model time included (default: 3600)",
    )
    add("--command-timeout", type=float, metavar="SECONDS", help="per command, capped by time left (default: 600)")
    add("--context-window", type=int, metavar="TOKENS", help="context budget (default: the model's own)")
    add("--output-reserve", type=int, metavar="TOKENS", help="tokens kept free for the reply (default: 4096)")
    add("--action-format", choices=["toolcall", "text"], help="bash as a tool call, or one fenced bash block")
    add("--prompts", type=Path, metavar="FILE.yaml", help="prompt templates (default: harness/prompts/default.yaml)")
    add("--max-format-errors", type=int, metavar="N", help="consecutive replies without an action that end it (3)")
    add("--memory-mb", type=int, metavar="MB", help="sandbox memory limit (default: 4096)")
    add("--pids", type=int, metavar="N", help="sandbox process limit (default: 512)")
    add("--cpus", type=float, metavar="N", help="sandbox CPU limit, cgroups only (default: 2)")
    add("--output-limit", type=int, metavar="BYTES", help="output shown per stream, head and tail (default: 20000)")
    add("--config", type=Path, metavar="FILE.yaml", help="read any of these settings from YAML; flags win")
    return parser


def build_replay_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m harness replay",
        description="Re-execute logged episodes with their logged replies and compare every observation and "
        "verdict, or (--regrade) grade the logged submissions again without running anything.",
    )
    parser.add_argument("path", type=Path, help="a trajectory file (episodes/<domain>/<task>.jsonl) or a run folder")
    parser.add_argument(
        "--regrade", action="store_true", help="re-grade from the logs alone; write results.regraded.jsonl"
    )
    return parser


def build_sandbox_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m harness sandbox", description="Build and clean up sandboxes.")
    commands = parser.add_subparsers(dest="action", required=True)
    build = commands.add_parser(
        "build", help="build the Docker image or a domain's E2B template from sandbox_templates/"
    )
    build.add_argument("backend", choices=["docker", "e2b"])
    build.add_argument(
        "--base",
        help="docker: base image (default: the recipe's, from a registry); 'debootstrap' builds one with no registry",
    )
    build.add_argument("--domain", help="e2b: the domain whose collection the template bakes in")
    build.add_argument(
        "--collections-dir", type=Path, default=None, help="default: collections/ (HARNESS_COLLECTIONS_DIR)"
    )
    commands.add_parser("cleanup", help="remove containers and E2B sandboxes left by runs that are no longer alive")
    return parser


def build_report_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m harness report",
        description="Accuracy tables (Markdown, CSV) and plots from one or more run folders (shards or models).",
    )
    parser.add_argument("runs", type=Path, nargs="+", help="run folders")
    parser.add_argument("--out", type=Path, help="output folder (default: RUN/report, or results/report-<time>)")
    return parser


def build_view_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m harness view", description="A self-contained HTML viewer.")
    parser.add_argument("run", type=Path, help="a run folder")
    parser.add_argument("--out", type=Path, help="output file (default: RUN/viewer.html)")
    return parser


def build_collection_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m harness collection", description="Build a collection from raw documents; show sizes."
    )
    commands = parser.add_subparsers(dest="action", required=True)
    build = commands.add_parser(
        "build",
        help="convert a folder of PDF, XLSX/XLS, CSV/TSV, DOCX, PPTX, HTML, Markdown and text files to Markdown",
        description="Exit code 0: all built; 1: some sources skipped (listed with the reason); 2: bad input; "
        "130: interrupted (what was converted is kept and recorded).",
    )
    build.add_argument("source_dir", type=Path, metavar="SRC_DIR", help="raw documents; first-level folders = sources")
    build.add_argument("--domain", required=True, metavar="NAME", help="the collection's name (collections/NAME/)")
    build.add_argument("--out", type=Path, metavar="DIR", help="the collection folder (default: COLLECTIONS_DIR/NAME)")
    build.add_argument(
        "--collections-dir", type=Path, metavar="DIR", help="default: collections/ (HARNESS_COLLECTIONS_DIR)"
    )
    build.add_argument(
        "--workers", type=int, metavar="N", default=min(4, os.cpu_count() or 1), help="processes (default: up to 4)"
    )
    build.add_argument("--prune", action="store_true", help="delete collection files no current source produces")
    build.add_argument("--ocr", action="store_true", help="read PDF pages without a text layer by OCR (Tesseract)")
    stats = commands.add_parser("stats", help="documents, bytes, tokens and formats per domain")
    stats.add_argument("domain", nargs="?", default="all", help="a domain or 'all' (default)")
    stats.add_argument(
        "--collections-dir", type=Path, metavar="DIR", help="default: collections/ (HARNESS_COLLECTIONS_DIR)"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["replay"]:
        return _replay(build_replay_parser().parse_args(argv[1:]))
    if argv[:1] == ["sandbox"]:
        return _sandbox(build_sandbox_parser().parse_args(argv[1:]))
    if argv[:1] == ["report"]:
        return _report(build_report_parser().parse_args(argv[1:]))
    if argv[:1] == ["view"]:
        return _view(build_view_parser().parse_args(argv[1:]))
    if argv[:1] == ["collection"]:
        return _collection(build_collection_parser().parse_args(argv[1:]))
    return _run(vars(build_parser().parse_args(argv)))


def _console() -> Console:
    return Console() if sys.stdout.isatty() else Console(width=140)


def _report_input_error(error: InputError) -> int:
    Console(stderr=True).print(f"[red]error:[/red] {error}", markup=True, highlight=False, soft_wrap=True)
    return EXIT_INPUT_ERROR


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM is handled like Ctrl-C: no new episodes, running ones cancelled, sandboxes removed."""
    raise KeyboardInterrupt


def _run(arguments: dict[str, Any]) -> int:
    console = _console()
    try:
        config_file = arguments.pop("config", None)
        file_settings = load_yaml_settings(config_file) if config_file else {}
        config = build_config(file_settings, arguments)
        from harness.runner import execute_run, plan_run

        plan = plan_run(config)
    except InputError as error:
        return _report_input_error(error)
    if threading.current_thread() is threading.main_thread():  # signal handlers live in the main thread only
        signal.signal(signal.SIGTERM, _interrupt)
    try:
        execute_run(plan, console)
    except KeyboardInterrupt:
        Console(stderr=True).print(f"interrupted; finished episodes are in {plan.run_dir}")
        return EXIT_INTERRUPTED
    return 0


def _sandbox(arguments: argparse.Namespace) -> int:
    from harness.sandbox_admin import build_sandbox, cleanup_sandboxes

    console = _console()
    try:
        if arguments.action == "cleanup":
            return cleanup_sandboxes(console)
        return build_sandbox(arguments.backend, arguments.base, arguments.domain, arguments.collections_dir, console)
    except InputError as error:
        return _report_input_error(error)


def _report(arguments: argparse.Namespace) -> int:
    from harness.report import write_report

    try:
        write_report(arguments.runs, arguments.out, _console())
    except InputError as error:
        return _report_input_error(error)
    return 0


def _view(arguments: argparse.Namespace) -> int:
    from harness.viewer import write_viewer

    try:
        path = write_viewer(arguments.run, arguments.out)
    except InputError as error:
        return _report_input_error(error)
    _console().print(f"viewer written to {path}")
    return 0


def _collection(arguments: argparse.Namespace) -> int:
    from harness.collection.command import run_collection_command

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupt)
    try:
        return run_collection_command(arguments, _console())
    except InputError as error:
        return _report_input_error(error)
    except KeyboardInterrupt:
        Console(stderr=True).print("interrupted; the files converted so far are kept and in the manifest")
        return EXIT_INTERRUPTED


def _replay(arguments: argparse.Namespace) -> int:
    from harness.replay import reexecute, regrade

    try:
        return (regrade if arguments.regrade else reexecute)(arguments.path, _console())
    except InputError as error:
        return _report_input_error(error)


if __name__ == "__main__":
    sys.exit(main())
