"""`python -m harness ...`: the command table and argument parsing; each command's work is in its own module."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from harness.core.errors import InputError
from harness.inputs.config import (
    add_setting_flags,
    build_config,
    default_collections_dir,
    default_tasks_dir,
    load_yaml_settings,
)
from harness.sandboxes.limits import ResourceLimits

EXIT_FAILED = 1
EXIT_INPUT_ERROR = 2
EXIT_INTERRUPTED = 130


def build_parser() -> argparse.ArgumentParser:
    """The run's flags (generated from `RunConfig`) and, as subcommands, every other command."""
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
    commands = parser.add_subparsers(title="commands", dest="command", metavar="COMMAND")
    for name, (build, summary) in SUBCOMMANDS.items():
        commands.add_parser(name, help=summary, add_help=False, parents=[build()])
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
    defaults = ResourceLimits()
    build.add_argument("--cpus", type=float, default=defaults.cpus, help="e2b: the template's CPUs (default: 2)")
    build.add_argument(
        "--memory-mb", type=int, default=defaults.memory_mb, help="e2b: the template's memory (default: 4096)"
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


def build_import_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m harness import",
        description="A run folder from another agent's trajectory files: rows graded by our graders; "
        "files matching no task are listed.",
    )
    parser.add_argument("format", choices=("mini-swe-agent",), help="the files' format")
    parser.add_argument("paths", type=Path, nargs="+", metavar="PATH", help="*.traj.json files or folders of them")
    parser.add_argument("--run-id", required=True, metavar="ID", help="the new run folder's name")
    parser.add_argument("--tasks-dir", type=Path, metavar="DIR", help="default: tasks/ (HARNESS_TASKS_DIR)")
    parser.add_argument(
        "--collections-dir", type=Path, metavar="DIR", help="default: collections/ (HARNESS_COLLECTIONS_DIR)"
    )
    parser.add_argument("--results-dir", type=Path, default=Path("results"), metavar="DIR", help="default: results/")
    parser.add_argument("--judge", metavar="MODEL[,MODEL...]", help="the judge panel for tasks graded by 'judge'")
    parser.add_argument("--judge-quorum", type=int, metavar="N", help="valid verdicts a grade needs (a majority)")
    parser.add_argument("--judge-api-base", metavar="URL", help="the judges' endpoint")
    return parser


def build_export_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m harness export", description="A run's finished episodes as another agent's trajectory files."
    )
    parser.add_argument("format", choices=("mini-swe-agent",), help="the files' format")
    parser.add_argument("run", type=Path, metavar="RUN_DIR", help="a run folder")
    parser.add_argument("out", type=Path, metavar="OUT_DIR", help="where <domain>/<task>.traj.json files go")
    return parser


def build_leakage_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m harness leakage",
        description="Tasks whose gold answer, solution or id is printed in their collection. Exit code 0: none "
        "(or only golds a task allows with `leak_allow`); 1: some; 2: bad input.",
    )
    parser.add_argument("--domain", default="all", metavar="LIST", help="domains, comma-separated, or all (default)")
    parser.add_argument("--tasks-dir", type=Path, metavar="DIR", help="default: tasks/ (HARNESS_TASKS_DIR)")
    parser.add_argument(
        "--collections-dir", type=Path, metavar="DIR", help="default: collections/ (HARNESS_COLLECTIONS_DIR)"
    )
    return parser


def build_tasks_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m harness tasks", description="Import other benchmarks' tasks.")
    commands = parser.add_subparsers(dest="action", required=True)
    imports = commands.add_parser("import", help="write a task file and its collections from a benchmark's data")
    formats = imports.add_subparsers(dest="format", required=True)
    muda = formats.add_parser(
        "mudabench",
        help="MuDABench data/simple.json or complex.json and its PDFs: judge-graded tasks, one collection per "
        "document set",
        description="Exit code 0: all imported; 1: some tasks skipped (listed with the reason); 2: bad input.",
    )
    muda.add_argument("data", type=Path, nargs="+", metavar="DATA_JSON", help="MuDABench data files (one per split)")
    muda.add_argument("--pdf-dir", type=Path, required=True, metavar="DIR", help="the PDFs, named <metadata id>.pdf")
    muda.add_argument("--domain", required=True, metavar="NAME", help="the task file's domain (tasks/NAME.jsonl)")
    muda.add_argument("--tasks-dir", type=Path, metavar="DIR", help="default: tasks/ (HARNESS_TASKS_DIR)")
    muda.add_argument(
        "--collections-dir", type=Path, metavar="DIR", help="default: collections/ (HARNESS_COLLECTIONS_DIR)"
    )
    muda.add_argument("--workers", type=int, default=1, metavar="N", help="conversion processes (default: 1)")
    return parser


SUBCOMMANDS: dict[str, tuple[Callable[[], argparse.ArgumentParser], str]] = {
    "replay": (build_replay_parser, "re-execute logged episodes and compare, or re-grade them from the logs"),
    "report": (build_report_parser, "accuracy tables (Markdown, CSV) and plots from run folders"),
    "view": (build_view_parser, "a self-contained HTML viewer of a run"),
    "sandbox": (build_sandbox_parser, "build the Docker image or an E2B template; clean up leftovers"),
    "collection": (build_collection_parser, "build a collection from raw documents; documents, bytes and tokens"),
    "import": (build_import_parser, "a run folder from mini-swe-agent trajectory files"),
    "export": (build_export_parser, "a run's episodes as mini-swe-agent trajectory files"),
    "leakage": (build_leakage_parser, "tasks whose gold, solution or id is printed in their collection"),
    "tasks": (build_tasks_parser, "import another benchmark's tasks and collections (MuDABench)"),
}
"""Every command besides running a batch: name -> (its parser, its one-line summary)."""


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    handlers = {"replay": _replay, "sandbox": _sandbox, "report": _report, "view": _view, "collection": _collection,
                "import": _import, "export": _export, "leakage": _leakage,
                "tasks": _tasks}  # fmt: skip
    if argv[:1] and argv[0] in handlers:
        return handlers[argv[0]](SUBCOMMANDS[argv[0]][0]().parse_args(argv[1:]))
    arguments = vars(build_parser().parse_args(argv))
    arguments.pop("command", None)
    return _run(arguments)


def _console() -> Console:
    return Console() if sys.stdout.isatty() else Console(width=140)


def _report_input_error(error: InputError) -> int:
    message = Text.assemble(("error:", "red"), f" {error}")  # the message quotes user data: no markup
    Console(stderr=True).print(message, highlight=False, soft_wrap=True)
    return EXIT_INPUT_ERROR


def _stop_on_interrupt_signals() -> None:
    """SIGTERM is handled like Ctrl-C, and SIGINT always stops the run cleanly, even where the runner was
    started with it ignored (a background job of a script inherits SIGINT ignored, so `kill -INT` would
    otherwise do nothing)."""
    if threading.current_thread() is threading.main_thread():  # signal handlers live in the main thread only
        signal.signal(signal.SIGTERM, _interrupt)
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM is handled like Ctrl-C: no new episodes, running ones cancelled, sandboxes removed."""
    raise KeyboardInterrupt


def _run(arguments: dict[str, Any]) -> int:
    console = _console()
    try:
        config_file = arguments.pop("config", None)
        file_settings = load_yaml_settings(config_file) if config_file else {}
        config = build_config(file_settings, arguments)
        from harness.run.executors.batch import ResultsUnwritable
        from harness.run.runner import execute_run, plan_run

        plan = plan_run(config)
    except InputError as error:
        return _report_input_error(error)
    _stop_on_interrupt_signals()
    try:
        execute_run(plan, console)
    except KeyboardInterrupt:
        Console(stderr=True).print(f"interrupted; finished episodes are in {plan.run_dir}", markup=False)
        return EXIT_INTERRUPTED
    except ResultsUnwritable as error:
        Console(stderr=True).print(f"error: {error}; the rows written so far are kept", markup=False, soft_wrap=True)
        return EXIT_FAILED
    except InputError as error:  # found on a Ray node (its collection differs): the run stops
        return _report_input_error(error)
    return 0


def _sandbox(arguments: argparse.Namespace) -> int:
    from harness.cli.sandbox_admin import build_sandbox, cleanup_sandboxes

    console = _console()
    try:
        if arguments.action == "cleanup":
            return cleanup_sandboxes(console)
        limits = ResourceLimits(memory_mb=arguments.memory_mb, cpus=arguments.cpus)
        return build_sandbox(
            arguments.backend, arguments.base, arguments.domain, arguments.collections_dir, console, limits
        )
    except InputError as error:
        return _report_input_error(error)


def _report(arguments: argparse.Namespace) -> int:
    from harness.analysis.report import write_report

    try:
        write_report(arguments.runs, arguments.out, _console())
    except InputError as error:
        return _report_input_error(error)
    return 0


def _view(arguments: argparse.Namespace) -> int:
    from harness.analysis.viewer import write_viewer

    try:
        path = write_viewer(arguments.run, arguments.out)
    except InputError as error:
        return _report_input_error(error)
    _console().print(f"viewer written to {path}", markup=False)
    return 0


def _collection(arguments: argparse.Namespace) -> int:
    from harness.cli.collection import run_collection_command

    _stop_on_interrupt_signals()
    try:
        return run_collection_command(arguments, _console())
    except InputError as error:
        return _report_input_error(error)
    except KeyboardInterrupt:
        Console(stderr=True).print("interrupted; the files converted so far are kept and in the manifest")
        return EXIT_INTERRUPTED


def _import(arguments: argparse.Namespace) -> int:
    from harness.cli.interop import ImportOptions, import_run
    from harness.run.judges import JudgeOptions

    tasks_dir = arguments.tasks_dir or default_tasks_dir()
    collections_dir = arguments.collections_dir or default_collections_dir()
    try:
        judges = JudgeOptions(arguments.judge, arguments.judge_quorum, arguments.judge_api_base)
        judge = judges.panel(arguments.results_dir, "") if arguments.judge else None
        options = ImportOptions(arguments.paths, tasks_dir, collections_dir, arguments.results_dir, arguments.run_id,
                                judge)  # fmt: skip
        return import_run(options, _console())
    except InputError as error:
        return _report_input_error(error)


def _tasks(arguments: argparse.Namespace) -> int:
    from harness.cli.tasks_import import request_from, run_mudabench_import

    try:
        if arguments.workers < 1:
            raise InputError(f"--workers: {arguments.workers} is not a positive number")
        return run_mudabench_import(request_from(arguments), _console())
    except InputError as error:
        return _report_input_error(error)


def _export(arguments: argparse.Namespace) -> int:
    from harness.cli.interop import export_run

    try:
        return export_run(arguments.run, arguments.out, _console())
    except InputError as error:
        return _report_input_error(error)


def _leakage(arguments: argparse.Namespace) -> int:
    from harness.inputs.leakage import find_leaks
    from harness.inputs.tasks import collection_path, load_task_file, resolve_domains

    tasks_dir = arguments.tasks_dir or default_tasks_dir()
    collections_dir = arguments.collections_dir or default_collections_dir()
    try:
        domains = resolve_domains(arguments.domain, tasks_dir)
        tasks = [task for domain in domains for task in load_task_file(tasks_dir / f"{domain}.jsonl")]
        hits = find_leaks(tasks, {domain: collection_path(collections_dir, domain) for domain in domains})
    except InputError as error:
        return _report_input_error(error)
    console = _console()
    for hit in hits:
        note = f" (allowed: {hit.allowed})" if hit.allowed else ""
        console.print(f"{hit.domain}/{hit.task_id}: {hit.what} printed in {hit.document}{note}",
                      markup=False, highlight=False, soft_wrap=True)  # fmt: skip
    counted = sum(hit.allowed is None for hit in hits)
    console.print(f"{len(tasks)} tasks checked: {counted} leaks, {len(hits) - counted} allowed", markup=False)
    return 1 if counted else 0


def _replay(arguments: argparse.Namespace) -> int:
    from harness.run.replay import reexecute, regrade

    try:
        if arguments.regrade:
            regrade(arguments.path, _console())
            return 0
        return 1 if reexecute(arguments.path, _console()) else 0
    except InputError as error:
        return _report_input_error(error)


if __name__ == "__main__":
    sys.exit(main())
