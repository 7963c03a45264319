"""The run's configuration: one record, defaults = the benchmark protocol, YAML file < CLI flags (merged in
inputs/config_sources.py).

Every setting is defined once, here: its type, default, flag help and valid range live on the field,
and `add_setting_flags` generates the command-line flags from them.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.core.errors import InputError
from harness.core.plugins import is_import_path

POSITIVE, NON_NEGATIVE = "positive", "non-negative"
MAX_RETRIES = 5
"""Retries of a model or judge call: the default of a run, an import's judges and a re-grade of an old run."""
JUDGE_TIMEOUT_S = 120.0
"""Seconds per judge call, retries included: the default of a run and of an import's judges."""

DEFAULT_OUTPUT_RESERVE = 4096
"""The context budget's reserve for the reply of a model without a reply cap (oracle, scripted, replay)."""


def setting(
    default: Any = None,
    help: str = "",
    *,
    factory: Any = None,
    bound: str | None = None,
    choices: tuple[str, ...] | None = None,
    metavar: str | None = None,
    flag: str | None = None,
    cli: bool = True,
) -> Any:
    """A `RunConfig` field with what its flag and its validation need."""
    metadata = {"help": help, "bound": bound, "choices": choices, "metavar": metavar, "flag": flag, "cli": cli}
    if factory is not None:
        return field(default_factory=factory, metadata=metadata)
    return field(default=default, metadata=metadata)


def default_tasks_dir() -> Path:
    """`HARNESS_TASKS_DIR`, else tasks/: every command that reads task files starts from here."""
    return Path(os.environ.get("HARNESS_TASKS_DIR", "tasks"))


def default_collections_dir() -> Path:
    """`HARNESS_COLLECTIONS_DIR`, else collections/: every command that reads or builds collections."""
    return Path(os.environ.get("HARNESS_COLLECTIONS_DIR", "collections"))


def _default_cache_dir() -> Path:
    """`HARNESS_CACHE_DIR`, else `$XDG_CACHE_HOME/harness`, else ~/.cache/harness: what every run may reuse
    (collection file hashes, the leakage scan), shared by all results folders of this user."""
    if os.environ.get("HARNESS_CACHE_DIR"):
        return Path(os.environ["HARNESS_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "harness"


@dataclass
class RunConfig:
    model: str = setting(
        "",
        "a litellm provider/model string (deepseek/..., openai/..., gemini/..., hosted_vllm/...), an alias from "
        "harness/models/aliases.yaml (e.g. deepseek-v4), oracle (runs each task's solution), human (a person at "
        "the terminal), scripted:FILE.yaml or replay:PATH; a comma-separated list runs a sweep",
    )
    sweep: Path | None = setting(
        None,
        "run several models in one invocation: a YAML list, per model its model, args, api_base, api_key_env, "
        "max_connections, max_cost and label (or give --model A,B,C)",
        metavar="FILE.yaml",
    )
    api_base: str | None = setting(
        None, "provider endpoint, e.g. http://127.0.0.1:8000/v1 for a local server", metavar="URL"
    )
    api_key_env: str | None = setting(
        None, "environment variable holding the API key (default: the provider's own)", metavar="NAME"
    )
    model_args: list[str] = setting(
        factory=list,
        help="passed to the provider, repeatable, values read as YAML scalars (e.g. reasoning_effort=high, "
        "seed=7); overrides an alias's argument",
        metavar="KEY=VALUE",
        flag="--model-arg",
    )
    temperature: float = setting(1.0, "sampling temperature", bound=NON_NEGATIVE)
    max_retries: int = setting(
        MAX_RETRIES,
        "retries of rate limits, 5xx, timeouts and connection errors (0: none)",
        bound=NON_NEGATIVE,
        metavar="N",
    )
    model_timeout: float = setting(
        600.0,
        "seconds of wall time per model call, failed attempts and waits included (each attempt never more "
        "than the episode's time left)",
        bound=POSITIVE,
        metavar="SECONDS",
    )
    model_aliases: dict[str, str] = setting(
        factory=dict, help="extra short names for litellm model strings (config file only)", cli=False
    )
    judge: str | None = setting(
        None,
        "litellm model(s) that grade tasks with grader 'judge', comma-separated for a panel",
        metavar="MODEL[,MODEL...]",
    )
    judge_quorum: int | None = setting(
        None,
        "valid judge verdicts a grade needs; fewer is judge_error (default: a majority of the panel)",
        bound=POSITIVE,
        metavar="N",
    )
    judge_api_base: str | None = setting(None, "the judges' endpoint (default: each provider's own)", metavar="URL")
    judge_timeout: float = setting(
        JUDGE_TIMEOUT_S, "seconds per judge call, retries included", bound=POSITIVE, metavar="SECONDS"
    )
    judge_prompt: Path | None = setting(
        None,
        "a judge protocol file: the judges' prompt template, what they read (the answer tag or the whole final "
        "reply) and how their verdict or score is read (docs/GRADERS.md), or a packaged one's name (mudabench: "
        "MuDABench's released code's; mudabench-paper: its paper's printed prompts; findocmre: FinDocMRE's paper's); "
        "default: ours (a profile may name its own)",
        metavar="FILE.yaml|NAME",
    )
    domain: str = setting("", "a domain name, a comma-separated list, or 'all'")
    task_ids: list[str] = setting(factory=list, help="run only this task (repeatable)", metavar="ID", flag="--task-id")
    limit: int | None = setting(None, "at most N tasks per domain (default: all)", bound=POSITIVE, metavar="N")
    epochs: int = setting(
        1, "episodes per task (repeats); raising it on resume adds the missing epochs", bound=POSITIVE, metavar="K"
    )
    tasks_dir: Path = setting(
        factory=default_tasks_dir,
        help="task files <domain>.jsonl (default: tasks/, env HARNESS_TASKS_DIR)",
    )
    collections_dir: Path = setting(
        factory=default_collections_dir,
        help="domain collections <domain>/ (default: collections/, env HARNESS_COLLECTIONS_DIR)",
    )
    follow_links: bool = setting(
        False,
        "use a task file or collection folder that is a link out of --tasks-dir or --collections-dir (refused "
        "otherwise: a dataset's link could mount your own files into the sandbox)",
    )
    results_dir: Path = setting(Path("results"), "where run folders go")
    cache_dir: Path = setting(
        factory=_default_cache_dir,
        help="collection hashes and leakage scans every run reuses (default: ~/.cache/harness, env HARNESS_CACHE_DIR)",
    )
    run_id: str | None = setting(None, "run folder name (default: time_model_domain); an existing run is resumed")
    sandbox: str = setting(
        "local",
        "sandbox backend by name: local (bubblewrap), docker, e2b, or a backend's import path package.module:Class "
        "(docs/guide/plugins.md)",
        metavar="NAME|MODULE:CLASS",
    )
    image: str | None = setting(
        None, "Docker image for --sandbox docker (default: harness-sandbox:<recipe hash>, from sandbox_templates/)"
    )
    workers: int = setting(1, "episodes run at once", bound=POSITIVE, metavar="N")
    max_sandboxes: int | None = setting(
        None, "sandboxes alive at once (default: --workers)", bound=POSITIVE, metavar="N"
    )
    max_connections: int | None = setting(
        None, "model calls in flight at once (default: --workers)", bound=POSITIVE, metavar="N"
    )
    executor: str = setting(
        "local",
        "where episodes run: local (threads of this process) or ray (tasks on a Ray cluster)",
        choices=("local", "ray"),
    )
    ray_address: str | None = setting(
        None,
        "with --executor ray: auto, a ray:// client address, or HOST:PORT of the head (default: start a "
        "local Ray instance)",
        metavar="ADDR",
    )
    max_cost: float | None = setting(
        None,
        "USD: stop starting new episodes once the run's spend reaches it; the rest stay pending for a resume "
        "(default: no cap)",
        bound=NON_NEGATIVE,
        metavar="USD",
    )
    max_episode_cost: float | None = setting(
        None,
        "USD: an episode's model call is refused once the episode's spend reaches it, and the episode ends as "
        "cost_limit (default: no cap)",
        bound=NON_NEGATIVE,
        metavar="USD",
    )
    label: str | None = setting(
        None,
        "the run's name in report tables (default: the model, plus the protocol settings it sets apart from "
        "the defaults)",
        metavar="TEXT",
    )
    retry_errors: int = setting(
        1,
        "attempts more, within the run, for an episode that ended as model_error, sandbox_error or harness_error "
        "(after a backoff)",
        bound=NON_NEGATIVE,
        metavar="N",
    )
    max_error_rate: float = setting(
        0.5,
        "share of infrastructure failures among the model's last --error-window episodes above which its "
        "remaining episodes are not started",
        bound=NON_NEGATIVE,
        metavar="R",
    )
    error_window: int = setting(50, "finished episodes --max-error-rate looks at", bound=POSITIVE, metavar="N")
    prices: Path | None = setting(
        None,
        "token prices per model (USD per million: input, output, cache_read, cache_write, long_context); "
        "litellm's bundled map for the others",
        metavar="FILE.yaml",
    )
    shard: str | None = setting(
        None,
        "run only part I of N of the task list (a stable hash of domain/id: the same split on every machine)",
        metavar="I/N",
    )
    redo: bool = setting(False, "on resume, run finished episodes again too")
    allow_protocol_change: bool = setting(
        False, "resume a run although its protocol (model, budgets, graders, tasks, collections) changed"
    )
    max_turns: int = setting(200, "model calls per episode", bound=POSITIVE, metavar="N")
    time_limit: float = setting(
        3600.0,
        "seconds of the agent's own time per episode, model time included; waiting for a sandbox or "
        "connection slot, and a provider's failed attempts and backoff waits, are not counted",
        bound=POSITIVE,
        metavar="SECONDS",
    )
    command_timeout: float = setting(
        600.0,
        "seconds one command may run (also capped by the episode's time left)",
        bound=POSITIVE,
        metavar="SECONDS",
    )
    context_window: int | None = setting(
        None,
        "context budget in tokens (default: the model's own; none for oracle and scripted)",
        bound=POSITIVE,
        metavar="TOKENS",
    )
    max_output_tokens: int | None = setting(
        None,
        "tokens one reply may have, sent as max_tokens (default: the model's own maximum in litellm's map, else "
        "8192, said on the console); a reply cut there is a turn spent",
        bound=POSITIVE,
        metavar="TOKENS",
    )
    output_reserve: int | None = setting(
        None,
        "tokens kept free for the reply when checking the context budget (default: the reply cap, "
        "--max-output-tokens; 4096 for models without one)",
        bound=NON_NEGATIVE,
        metavar="TOKENS",
    )
    prompts: Path | None = setting(
        None,
        "prompt templates (system, task, observation, format_error; Jinja2; default: "
        "harness/inputs/prompts/default.yaml, with --vision agent-vision.yaml); their digest is part of the protocol",
        metavar="FILE.yaml",
    )
    action_format: str = setting(
        "toolcall",
        "toolcall: bash as a function tool; text: exactly one closed fenced bash/sh block per reply (CommonMark "
        "fences; a reply over 1,000,000 characters is a format error)",
        choices=("toolcall", "text"),
    )
    max_format_errors: int = setting(
        3, "consecutive replies without a valid action that end the episode", bound=POSITIVE, metavar="N"
    )
    memory_mb: int = setting(4096, "sandbox memory limit", bound=POSITIVE, metavar="MB")
    pids: int = setting(512, "sandbox process limit", bound=POSITIVE, metavar="N")
    cpus: float = setting(2.0, "sandbox CPU limit", bound=POSITIVE, metavar="N")
    disk_mb: int = setting(
        2048,
        "sandbox scratch space (/workspace/run and /tmp together) in MB, below --memory-mb",
        bound=POSITIVE,
        metavar="MB",
    )
    output_limit: int = setting(
        20_000, "bytes of each output stream shown to the model (head and tail kept)", bound=POSITIVE, metavar="BYTES"
    )
    closed_book: bool = setting(
        False,
        "a contamination control: the same tasks, loop and budgets with an empty /workspace/documents "
        "(recorded in the protocol; the report compares it with a normal run of the model)",
    )
    vision: bool = setting(
        False,
        "the agent can look: besides bash it gets a view_image tool that shows it an image file of its sandbox "
        "(checked as untrusted input, stored in the run folder by hash; needs --action-format toolcall; recorded "
        "in the protocol)",
    )
    zero_shot: str | None = setting(
        None,
        "the paper's protocol (FinDocMRE), short for --solver zero-shot --solver-arg input=MODE: no sandbox and no "
        "tools; the task's document given as page images (full), its charts cut out (cropped) or its pages with "
        "the charts boxed (bbox), with the question; one reply, graded by the task's grader. Needs collections "
        "built with --page-images; recorded in the protocol",
        choices=("full", "cropped", "bbox"),
    )
    solver: str = setting(
        "bash-agent",
        "how an episode is solved: bash-agent (the default), zero-shot, mini-swe-agent (an installed agent: "
        "docs/guide/agents.md), or a solver's import path package.module:Class (docs/guide/plugins.md)",
        metavar="NAME|MODULE:CLASS",
    )
    solver_args: list[str] = setting(
        factory=list,
        help="an argument of the solver, repeatable (e.g. input=cropped for zero-shot)",
        metavar="KEY=VALUE",
        flag="--solver-arg",
    )
    profile: str | None = setting(
        None,
        "the benchmark profile the run follows: agora, mudabench, findocmre, a MuDABench Table 2 row's "
        "(mudabench-rag-1x, ..., mudabench-workflow-5) or a profile file (default: the task set's benchmark, else "
        "agora); its settings apply where the settings file and the flags set none",
        metavar="NAME|FILE",
    )
    watch_opens: bool = setting(
        False,
        "record exactly which collection files each episode opens (inotify; used only with one sandbox at "
        "a time on local or a local Docker engine, and nothing else may read the collection folder meanwhile)",
    )

    given: frozenset[str] = field(default=frozenset(), compare=False, repr=False, metadata={"internal": True})
    """The settings the settings file and the flags set (not a setting: what a profile may not change)."""
    profiled: dict[str, Any] = field(default_factory=dict, compare=False, repr=False, metadata={"internal": True})
    """The settings the run's profile set (not a setting): the defaults its label is told apart from, and those a
    model's API may decline (run/model_factory.py)."""

    @property
    def sandboxes_at_once(self) -> int:
        """`--max-sandboxes`, by default `--workers` (the field keeps what was given, for run.yaml)."""
        return self.max_sandboxes or self.workers

    @property
    def connections_at_once(self) -> int:
        """`--max-connections`, by default `--workers` (the field keeps what was given, for run.yaml)."""
        return self.max_connections or self.workers


def setting_fields() -> tuple[dataclasses.Field[Any], ...]:
    return tuple(spec for spec in dataclasses.fields(RunConfig) if not spec.metadata.get("internal"))


def setting_names() -> list[str]:
    return [f.name for f in setting_fields()]


def flag_of(name: str) -> str:
    spec = next(f for f in setting_fields() if f.name == name)
    return spec.metadata.get("flag") or "--" + name.replace("_", "-")


def add_setting_flags(parser: argparse.ArgumentParser, metavars: dict[str, str] | None = None) -> None:
    """One flag per setting, generated from the field: type, choices, metavar, help and default; METAVARS: a
    setting's metavar from elsewhere (the sandbox backends the registry holds when the parser is built)."""
    hints = typing.get_type_hints(RunConfig)
    for spec in setting_fields():
        meta = spec.metadata
        if not meta["cli"]:
            continue
        kind = _value_kind(hints[spec.name])
        options: dict[str, Any] = {"dest": spec.name, "help": meta["help"]}
        if kind is bool:
            options["action"] = "store_true"
        elif typing.get_origin(kind) is list:
            options |= {"action": "append", "metavar": meta["metavar"]}
        else:
            metavar = (metavars or {}).get(spec.name, meta["metavar"])
            options |= {"metavar": metavar, "choices": meta["choices"]}
            default = spec.default
            if default not in (None, "", dataclasses.MISSING):
                options["help"] += f" (default: {default})"
        parser.add_argument(flag_of(spec.name), **{k: v for k, v in options.items() if v is not None})


def check_setting(name: str, value: Any, where: str, choices: dict[str, tuple[str, ...]] | None = None) -> Any:
    """VALUE as setting NAME's type, in its range (WHERE names the file and line, or the flag, that gave it)."""
    spec = next(spec for spec in setting_fields() if spec.name == name)
    coerced = _coerce(value, typing.get_type_hints(RunConfig)[name], where)
    _check_range(coerced, spec.metadata | {"choices": (choices or {}).get(name, spec.metadata["choices"])}, where)
    return coerced


def _value_kind(hint: Any) -> Any:
    kinds = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    return next(k for k in kinds if k is not type(None))


def _coerce(value: Any, hint: Any, where: str) -> Any:
    kinds = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    if value is None and type(None) in kinds:
        return None
    kind = _value_kind(hint)
    origin = typing.get_origin(kind)
    try:
        if origin is list:
            items = value if isinstance(value, list) else [value]
            return [str(item) for item in items]
        if origin is dict:
            if not isinstance(value, dict):
                raise ValueError
            return {str(key): str(item) for key, item in value.items()}
        if kind is bool:
            if not isinstance(value, bool):
                raise ValueError
            return value
        if kind in (int, float) and isinstance(value, bool):
            raise ValueError
        if kind is int:
            number = float(value) if isinstance(value, float) else None
            if number is not None and not number.is_integer():
                raise ValueError
            return int(value)
        return kind(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{where}: {value!r} is not a valid {getattr(kind, '__name__', kind)}") from None


def _check_range(value: Any, meta: Any, where: str) -> None:
    if value is None:
        return
    if meta["choices"] and value not in meta["choices"] and not is_import_path(str(value)):
        raise InputError(f"{where}: {value!r} is not one of {', '.join(meta['choices'])}")
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(f"{where}: {value!r} is not a finite number")
    if meta["bound"] == POSITIVE and value <= 0:
        raise InputError(f"{where}: {value!r} must be positive")
    if meta["bound"] == NON_NEGATIVE and value < 0:
        raise InputError(f"{where}: {value!r} must not be negative")


_UNWRITTEN_WHEN_UNSET: dict[str, object] = {
    "judge_prompt": None,
    "follow_links": False,
    "vision": False,
    "zero_shot": None,
    "solver": "bash-agent",
    "solver_args": [],
    "profile": None,
}
"""Settings newer than most run folders, and their unset values: left out of run.yaml when unset, so the records
of runs without them stay as they were."""


def config_to_dict(config: RunConfig) -> dict[str, Any]:
    return {
        key: str(value) if isinstance(value, Path) else value
        for key, value in dataclasses.asdict(config).items()
        if key not in ("given", "profiled")
        and not (key in _UNWRITTEN_WHEN_UNSET and value == _UNWRITTEN_WHEN_UNSET[key])
    }
