"""Turn a `--model` spec into a fresh model per episode; problems surface before the run starts."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
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

ALIASES_FILE = Path(__file__).with_name("aliases.yaml")
LOCAL_SERVER_EXAMPLE = "http://127.0.0.1:30000/v1"
UNCHECKED_KEYS = {"zai": "ZAI_API_KEY"}
"""Key variables of providers that litellm's environment check passes without a key."""


@dataclass(frozen=True)
class ModelAlias:
    """What a `--model` name stands for (see aliases.yaml)."""

    model: str
    """The litellm provider/model string."""
    args: dict[str, Any] = field(default_factory=dict)
    """Provider arguments of the published protocol, e.g. the maximum reasoning effort."""
    api_base_required: bool = False
    """Served by the user (e.g. with SGLang), so the run needs --api-base."""
    serve_hint: str | None = None
    """The command that starts that server."""


@dataclass(frozen=True)
class ModelFactory:
    """A fresh model per episode, and the settings each of them calls the provider with."""

    build: Callable[[Task], Model]
    settings: dict[str, Any]
    """The provider string, temperature, arguments and context window every call uses: run.yaml's `model`,
    and part of the protocol (a resume under other ones is refused)."""

    def __call__(self, task: Task) -> Model:
        return self.build(task)


def model_factory(config: RunConfig, tasks: list[Task]) -> ModelFactory:
    """Validate the spec against the selected tasks and return a per-episode constructor."""
    spec, action_format = config.model, config.action_format
    offline = {"model": spec}  # nothing is sent anywhere
    if spec == "oracle":
        for task in tasks:
            if not task.solution:
                raise InputError(
                    f"{config.tasks_dir / (task.domain + '.jsonl')}: task {task.id!r}: field 'solution': "
                    "missing, needed by --model oracle"
                )
        return ModelFactory(lambda task: OracleModel(task.solution or "", action_format), offline)
    if spec.startswith("scripted:"):
        replies = load_script(Path(spec.removeprefix("scripted:")))
        return ModelFactory(lambda task: ScriptedModel(replies, action_format, name=spec), offline)
    if spec.startswith("replay:"):
        sources = replay_sources(Path(spec.removeprefix("replay:")), tasks)
        return ModelFactory(lambda task: ReplayModel(sources[(task.domain, task.id)]), offline)
    return _provider_factory(config)


def load_aliases(extra_aliases: dict[str, str]) -> dict[str, ModelAlias]:
    """The bundled table (name -> provider string or mapping) and the user's names (name -> provider string)."""
    table: dict[str, Any] = {**yaml.safe_load(ALIASES_FILE.read_text(encoding="utf-8")), **extra_aliases}
    return {name: ModelAlias(entry) if isinstance(entry, str) else ModelAlias(**entry) for name, entry in table.items()}


def resolve_model(spec: str, extra_aliases: dict[str, str]) -> ModelAlias:
    """An alias to what it stands for; a bare unknown name is an error that shows how to write one."""
    aliases = load_aliases(extra_aliases)
    alias = aliases.get(spec, ModelAlias(spec))
    if "/" not in alias.model:
        raise InputError(
            f"--model: unknown model {spec!r}: write provider/model as litellm does (e.g. deepseek/deepseek-v4-pro, "
            "openai/gpt-5, anthropic/claude-sonnet-4-5, hosted_vllm/NAME with --api-base), or use an alias: "
            + ", ".join(sorted(aliases))
        )
    return alias


def parse_model_args(pairs: list[str]) -> dict[str, Any]:
    arguments: dict[str, Any] = {}
    for pair in pairs:
        key, separator, value = pair.partition("=")
        if not separator or not key.strip():
            raise InputError(f"--model-arg: {pair!r} is not key=value")
        arguments[key.strip()] = yaml.safe_load(value) if value else ""
    return arguments


def _require_provider_key(name: str) -> None:
    """Fail before the run, not as a failed call in every episode, when no key is set."""
    import litellm

    check = litellm.validate_environment(model=name)
    unchecked = UNCHECKED_KEYS.get(name.split("/", 1)[0])
    if unchecked and not os.environ.get(unchecked):
        check = {"keys_in_environment": False, "missing_keys": [unchecked]}
    if not check["keys_in_environment"]:
        missing = " or ".join(check["missing_keys"])
        raise InputError(f"--model {name}: no API key: set {missing} (or name the variable with --api-key-env)")


def _provider_factory(config: RunConfig) -> ModelFactory:
    from harness.models.litellm_model import LiteLLMModel, ProviderSettings, context_window_of

    alias = resolve_model(config.model, config.model_aliases)
    if alias.api_base_required and not config.api_base:
        raise InputError(
            f"--model {config.model}: served locally, so --api-base is needed: start the server with "
            f"`{alias.serve_hint}` and pass --api-base {LOCAL_SERVER_EXAMPLE}"
        )
    api_key = None
    if config.api_key_env:
        api_key = os.environ.get(config.api_key_env)
        if not api_key:
            raise InputError(f"--api-key-env: environment variable {config.api_key_env} is not set")
    else:
        _require_provider_key(alias.model)
    settings = ProviderSettings(
        model=alias.model,
        action_format=config.action_format,
        api_base=config.api_base,
        api_key=api_key,
        temperature=config.temperature,
        model_args={**alias.args, **parse_model_args(config.model_args)},
        max_retries=config.max_retries,
        call_timeout_s=config.model_timeout,
    )
    window = config.context_window or context_window_of(alias.model)
    record = {"model": alias.model, "temperature": config.temperature, "args": settings.model_args,
              "context_window": window}  # fmt: skip
    return ModelFactory(lambda task: LiteLLMModel(settings, window), record)
