"""Where a run's settings come from: a YAML settings file and the command-line flags, merged (flags win) and
checked into one `RunConfig`; a bad value is named with its file and line, or its flag."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from harness.core.errors import InputError, read_text_input
from harness.core.yaml_safe import compose_yaml, load_yaml
from harness.inputs.config import RunConfig, check_setting, flag_of, setting_names


def load_yaml_settings(path: Path) -> dict[str, Any]:
    """Read a config file; keys are flag names (`max-turns` or `max_turns`). Errors name file and line."""
    text = read_text_input(path, "config")
    node, data = compose_yaml(text, path), load_yaml(text, path)
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


def build_config(
    file_settings: dict[str, Any], cli_settings: dict[str, Any], choices: dict[str, tuple[str, ...]] | None = None
) -> RunConfig:
    """Merge (CLI wins), coerce types, validate. `cli_settings` holds only flags the user gave; `choices`: the
    allowed values of settings that come from elsewhere (the sandbox backends the registry holds), so a bad one
    in a settings file is named with its file and line."""
    source = file_settings.pop("__source__", None)
    config = RunConfig()
    for origin, settings in (("file", file_settings), ("cli", cli_settings)):
        for name, value in settings.items():
            setattr(config, name, check_setting(name, value, _where(origin, name, source), choices))
    config.given = frozenset(file_settings) | frozenset(cli_settings)
    if not config.model and config.sweep is None:
        raise InputError("--model: required (e.g. --model oracle)")
    if not config.domain:
        raise InputError("--domain: required (a name, a comma list, or all)")
    if config.vision and config.action_format != "toolcall":
        origin = "file" if "vision" in file_settings and "vision" not in cli_settings else "cli"
        raise InputError(
            f"{_where(origin, 'vision', source)}: the agent looks through its view_image tool, so it needs "
            f"{flag_of('action_format')} toolcall (not {config.action_format})"
        )
    if config.vision and config.executor == "ray":
        origin = "file" if "vision" in file_settings and "vision" not in cli_settings else "cli"
        raise InputError(
            f"{_where(origin, 'vision', source)}: not with {flag_of('executor')} ray yet: an episode stores its images "
            "in the run folder, which on a Ray cluster only the driver writes"
        )
    if config.zero_shot is not None:  # the shorthand: the zero-shot solver with its input
        origin = "file" if "zero_shot" in file_settings and "zero_shot" not in cli_settings else "cli"
        if config.solver not in ("bash-agent", "zero-shot"):
            raise InputError(f"{_where(origin, 'zero_shot', source)}: not with {flag_of('solver')} {config.solver}")
        config.solver = "zero-shot"
        config.given |= {"solver", "solver_args"}
        if f"input={config.zero_shot}" not in config.solver_args:  # a replay's recorded config has it already
            config.solver_args = [*config.solver_args, f"input={config.zero_shot}"]
    if config.zero_shot is not None and (config.vision or config.closed_book):
        other = "vision" if config.vision else "closed_book"
        origin = "file" if "zero_shot" in file_settings and "zero_shot" not in cli_settings else "cli"
        raise InputError(
            f"{_where(origin, 'zero_shot', source)}: the zero-shot protocol has no sandbox, so no "
            f"{flag_of(other)} (the documents are in the prompt)"
        )
    if config.zero_shot is not None and config.executor == "ray":
        origin = "file" if "zero_shot" in file_settings and "zero_shot" not in cli_settings else "cli"
        raise InputError(
            f"{_where(origin, 'zero_shot', source)}: not with {flag_of('executor')} ray yet: an episode stores its "
            "images in the run folder, which on a Ray cluster only the driver writes"
        )
    if config.disk_mb >= config.memory_mb:  # refused, not clamped: both are limits the user set or can see
        origin = "file" if "disk_mb" in file_settings and "disk_mb" not in cli_settings else "cli"
        raise InputError(
            f"{_where(origin, 'disk_mb', source)}: {config.disk_mb} MB must be below {flag_of('memory_mb')} "
            f"({config.memory_mb} MB): the scratch space is kept in memory, within that limit"
        )
    return config


def _where(origin: str, name: str, source: tuple[Path, dict[str, int]] | None) -> str:
    if origin == "cli" or source is None:
        return flag_of(name)
    path, lines = source
    line = lines.get(name, lines.get(name.replace("_", "-"), 1))
    return f"{path}:{line}: field '{name}'"
