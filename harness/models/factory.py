"""Turn a `--model` spec into a fresh model per episode; problems surface before the run starts."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from harness.config import RunConfig
from harness.errors import InputError
from harness.models import Model
from harness.models.oracle import OracleModel
from harness.models.replay import ReplayModel, replay_sources
from harness.models.scripted import ScriptedModel, load_script
from harness.tasks import Task

ModelFactory = Callable[[Task], Model]
ALIASES_FILE = Path(__file__).with_name("aliases.yaml")


def model_factory(config: RunConfig, tasks: list[Task]) -> ModelFactory:
    """Validate the spec against the selected tasks and return a per-episode constructor."""
    spec, action_format = config.model, config.action_format
    if spec == "oracle":
        for task in tasks:
            if not task.solution:
                raise InputError(
                    f"{config.tasks_dir / (task.domain + '.jsonl')}: task {task.id!r}: field 'solution': "
                    "missing, needed by --model oracle"
                )
        return lambda task: OracleModel(task.solution or "", action_format)
    if spec.startswith("scripted:"):
        replies = load_script(Path(spec.removeprefix("scripted:")))
        return lambda task: ScriptedModel(replies, action_format, name=spec)
    if spec.startswith("replay:"):
        sources = replay_sources(Path(spec.removeprefix("replay:")), tasks)
        return lambda task: ReplayModel(sources[(task.domain, task.id)])
    return _provider_factory(config)


def resolve_model_name(spec: str, extra_aliases: dict[str, str]) -> str:
    """An alias to its litellm string; a bare unknown name is an error that shows how to write one."""
    aliases = {**yaml.safe_load(ALIASES_FILE.read_text()), **extra_aliases}
    name = aliases.get(spec, spec)
    if "/" not in name:
        raise InputError(
            f"--model: unknown model {spec!r}: write provider/model as litellm does (e.g. deepseek/deepseek-v4-pro, "
            "openai/gpt-5, anthropic/claude-sonnet-4-5, hosted_vllm/NAME with --api-base), or use an alias: "
            + ", ".join(sorted(aliases))
        )
    return name


def parse_model_args(pairs: list[str]) -> dict[str, Any]:
    arguments: dict[str, Any] = {}
    for pair in pairs:
        key, separator, value = pair.partition("=")
        if not separator or not key.strip():
            raise InputError(f"--model-arg: {pair!r} is not key=value")
        arguments[key.strip()] = yaml.safe_load(value) if value else ""
    return arguments


def _require_provider_key(name: str) -> None:
    """Fail before the run, not as a retried 'server error' on every episode, when no key is set."""
    import litellm

    check = litellm.validate_environment(model=name)
    if not check["keys_in_environment"]:
        missing = " or ".join(check["missing_keys"])
        raise InputError(f"--model {name}: no API key: set {missing} (or name the variable with --api-key-env)")


def _provider_factory(config: RunConfig) -> ModelFactory:
    from harness.models.litellm_model import LiteLLMModel, ProviderSettings, context_window_of

    name = resolve_model_name(config.model, config.model_aliases)
    api_key = None
    if config.api_key_env:
        api_key = os.environ.get(config.api_key_env)
        if not api_key:
            raise InputError(f"--api-key-env: environment variable {config.api_key_env} is not set")
    else:
        _require_provider_key(name)
    settings = ProviderSettings(
        model=name,
        action_format=config.action_format,
        api_base=config.api_base,
        api_key=api_key,
        temperature=config.temperature,
        model_args=parse_model_args(config.model_args),
        max_retries=config.max_retries,
        call_timeout_s=config.model_timeout,
    )
    window = config.context_window or context_window_of(name)
    return lambda task: LiteLLMModel(settings, window)
