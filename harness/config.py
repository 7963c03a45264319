"""The run's configuration: one record, defaults = the benchmark protocol, YAML file < CLI flags."""

from __future__ import annotations

import dataclasses
import os
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.errors import InputError, yaml_input_error


@dataclass
class RunConfig:
    model: str = ""
    """`oracle`, `scripted:FILE.yaml`, `replay:PATH`, a litellm `provider/model` string, or an alias."""
    api_base: str | None = None
    """Provider endpoint, e.g. http://127.0.0.1:8000/v1 for a local vLLM/SGLang/llama.cpp server."""
    api_key_env: str | None = None
    """Environment variable holding the API key (None: litellm's usual one for the provider)."""
    model_args: list[str] = field(default_factory=list)
    """`key=value` pairs passed to the provider (values read as YAML scalars), e.g. reasoning_effort=high."""
    temperature: float = 1.0
    max_retries: int = 5
    """Retries of rate limits, 5xx, timeouts and connection errors (0: none)."""
    model_timeout: float = 600.0
    """Seconds one model call may take, retries included (also capped by the episode's time left)."""
    model_aliases: dict[str, str] = field(default_factory=dict)
    """Extra short names for litellm model strings, on top of harness/models/aliases.yaml."""
    domain: str = ""
    """A domain name, a comma-separated list, or `all`."""
    task_ids: list[str] = field(default_factory=list)
    """Run only these task ids (empty: every task)."""
    limit: int | None = None
    """At most this many tasks per domain (None: all)."""
    tasks_dir: Path = field(default_factory=lambda: Path(os.environ.get("HARNESS_TASKS_DIR", "tasks")))
    collections_dir: Path = field(
        default_factory=lambda: Path(os.environ.get("HARNESS_COLLECTIONS_DIR", "collections"))
    )
    results_dir: Path = Path("results")
    run_id: str | None = None
    """Run folder name under results_dir (None: time + model + domain)."""
    sandbox: str = "local"
    """local | docker | e2b."""
    image: str | None = None
    """Docker image (None: the image built from the current recipe, harness-sandbox:<recipe hash>)."""
    workers: int = 1
    """Episodes run at once."""
    max_sandboxes: int | None = None
    """Sandboxes alive at once (None: --workers)."""
    max_connections: int | None = None
    """Model calls in flight at once (None: --workers)."""
    max_cost: float | None = None
    """USD: stop starting new episodes once the run's spend reaches it (None: no cap)."""
    shard: str | None = None
    """`i/n`: run only the i-th of n deterministic parts of the task list (1-based)."""
    redo: bool = False
    """On resume, run every selected task again, finished ones included."""
    allow_protocol_change: bool = False
    """Resume a run although its protocol (model, budgets, grader) differs from run.yaml's."""
    max_turns: int = 200
    """Model calls per episode."""
    time_limit: float = 3600.0
    """Wall-clock seconds per episode, model time included."""
    command_timeout: float = 600.0
    """Seconds one command may run (also capped by the episode's time left)."""
    context_window: int | None = None
    """Tokens; None: from the model's info, or unlimited for models without one (oracle, scripted)."""
    output_reserve: int = 4096
    """Tokens kept free for the reply when checking the context budget."""
    prompts: Path | None = None
    """A prompt file like harness/prompts/default.yaml (None: that one)."""
    action_format: str = "toolcall"
    """toolcall (a bash function tool) | text (exactly one fenced bash block per reply)."""
    max_format_errors: int = 3
    """Consecutive replies without a valid action that end the episode as `format_errors`."""
    memory_mb: int = 4096
    """Sandbox memory limit."""
    pids: int = 512
    """Sandbox process limit."""
    cpus: float = 2.0
    """Sandbox CPU limit (cgroups only)."""
    disk_mb: int = 2048
    """Sandbox scratch space (/workspace/run and /tmp) in megabytes."""
    output_limit: int = 20_000
    """Bytes of each output stream shown to the model (head and tail kept)."""


_CHOICES = {"sandbox": ("local", "docker", "e2b"), "action_format": ("toolcall", "text")}
_NON_NEGATIVE = ("max_retries", "temperature", "max_cost")
_POSITIVE = (
    "model_timeout",
    "workers",
    "max_turns",
    "time_limit",
    "command_timeout",
    "max_format_errors",
    "memory_mb",
    "pids",
    "disk_mb",
)


def setting_names() -> list[str]:
    return [f.name for f in dataclasses.fields(RunConfig)]


def load_yaml_settings(path: Path) -> dict[str, Any]:
    """Read a config file; keys are flag names (`max-turns` or `max_turns`). Errors name file and line."""
    try:
        text = path.read_text(encoding="utf-8")
        node = yaml.compose(text)
        data = yaml.safe_load(text)
    except OSError as error:
        raise InputError(f"{path}: cannot read config: {error.strerror}") from None
    except yaml.YAMLError as error:
        raise yaml_input_error(path, error) from None
    if data is None:
        return {}
    if not isinstance(data, dict) or not isinstance(node, yaml.MappingNode):
        raise InputError(f"{path}:1: config must be a mapping of setting: value")
    lines = {key.value: key.start_mark.line + 1 for key, _ in node.value}
    settings = {}
    for key, value in data.items():
        name = str(key).replace("-", "_")
        if name not in setting_names():
            raise InputError(f"{path}:{lines.get(key, 1)}: field '{key}': unknown setting")
        settings[name] = value
    return {"__source__": (path, lines), **settings}


def build_config(file_settings: dict[str, Any], cli_settings: dict[str, Any]) -> RunConfig:
    """Merge (CLI wins), coerce types, validate. `cli_settings` holds only flags the user gave."""
    source = file_settings.pop("__source__", None)
    config = RunConfig()
    hints = typing.get_type_hints(RunConfig)
    for origin, settings in (("file", file_settings), ("cli", cli_settings)):
        for name, value in settings.items():
            where = _where(origin, name, source)
            setattr(config, name, _coerce(value, hints[name], where))
    for name, choices in _CHOICES.items():
        if getattr(config, name) not in choices:
            raise InputError(
                f"--{name.replace('_', '-')}: {getattr(config, name)!r} is not one of {', '.join(choices)}"
            )
    for name in (*_POSITIVE, "max_sandboxes", "max_connections"):
        if getattr(config, name) is not None and getattr(config, name) <= 0:
            raise InputError(f"--{name.replace('_', '-')}: must be positive")
    for name in _NON_NEGATIVE:
        if (getattr(config, name) or 0) < 0:
            raise InputError(f"--{name.replace('_', '-')}: must not be negative")
    if not config.model:
        raise InputError("--model: required (e.g. --model oracle)")
    if not config.domain:
        raise InputError("--domain: required (a name, a comma list, or all)")
    return config


def _where(origin: str, name: str, source: tuple[Path, dict[str, int]] | None) -> str:
    if origin == "cli" or source is None:
        return f"--{name.replace('_', '-')}"
    path, lines = source
    line = lines.get(name, lines.get(name.replace("_", "-"), 1))
    return f"{path}:{line}: field '{name}'"


def _coerce(value: Any, hint: Any, where: str) -> Any:
    kinds = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    if value is None and type(None) in kinds:
        return None
    kind = next(k for k in kinds if k is not type(None))
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
        return kind(value)
    except (TypeError, ValueError):
        raise InputError(f"{where}: {value!r} is not a valid {getattr(kind, '__name__', kind)}") from None


def config_to_dict(config: RunConfig) -> dict[str, Any]:
    return {key: str(value) if isinstance(value, Path) else value for key, value in dataclasses.asdict(config).items()}
