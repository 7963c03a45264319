"""Prompt templates: YAML files of Jinja2 templates (`default.yaml` ships with the package)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import yaml

_TEMPLATE_NAMES = ("system", "task", "observation", "format_error")
_ENVIRONMENT = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=False, autoescape=False)


@dataclass(frozen=True)
class PromptSet:
    templates: dict[str, jinja2.Template]

    def render(self, name: str, **variables: Any) -> str:
        return self.templates[name].render(**variables).strip()


def load_prompts(path: Path | None = None) -> PromptSet:
    path = path or Path(__file__).with_name("default.yaml")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    missing = [name for name in _TEMPLATE_NAMES if name not in data]
    if missing:
        raise ValueError(f"{path}: missing template {missing[0]!r}")
    return PromptSet({name: _ENVIRONMENT.from_string(data[name]) for name in _TEMPLATE_NAMES})
