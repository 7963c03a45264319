"""Model names: the bundled aliases (aliases.yaml) and the user's, resolved to litellm provider strings."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.core.errors import InputError
from harness.core.yaml_safe import load_yaml

_ALIASES_FILE = Path(__file__).with_name("aliases.yaml")


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


def _load_aliases(extra_aliases: dict[str, str]) -> dict[str, ModelAlias]:
    """The bundled table (name -> provider string or mapping) and the user's names (name -> provider string)."""
    table: dict[str, Any] = {**load_yaml(_ALIASES_FILE.read_text(encoding="utf-8"), _ALIASES_FILE), **extra_aliases}
    return {name: ModelAlias(entry) if isinstance(entry, str) else ModelAlias(**entry) for name, entry in table.items()}


def resolve_model(spec: str, extra_aliases: dict[str, str], other_names: Iterable[str] = ()) -> ModelAlias:
    """An alias to what it stands for; a bare unknown name is an error that names the closest aliases (and
    OTHER_NAMES, the models that are no alias: oracle, human) and shows how to write one."""
    aliases = _load_aliases(extra_aliases)
    alias = aliases.get(spec, ModelAlias(spec))
    if "/" not in alias.model:
        close = difflib.get_close_matches(spec, [*aliases, *other_names], n=3, cutoff=0.6)
        meant = f"did you mean {' or '.join(close)}? " if close else ""
        raise InputError(
            f"--model: unknown model {spec!r}; {meant}write provider/model as litellm does (e.g. "
            "deepseek/deepseek-v4-pro, openai/gpt-5, anthropic/claude-sonnet-4-5, hosted_vllm/NAME with --api-base), "
            "or use an alias: " + ", ".join(sorted(aliases))
        )
    return alias


def parse_model_args(pairs: list[str]) -> dict[str, Any]:
    arguments: dict[str, Any] = {}
    for pair in pairs:
        key, separator, value = pair.partition("=")
        if not separator or not key.strip():
            raise InputError(f"--model-arg: {pair!r} is not key=value")
        arguments[key.strip()] = load_yaml(value, f"--model-arg {key.strip()}") if value else ""
    return arguments
