"""Prompt templates: YAML files of Jinja2 templates (`default.yaml` ships with the package)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import yaml

from harness.errors import InputError, yaml_input_error

_TEMPLATE_NAMES = ("system", "task", "observation", "format_error")
_ENVIRONMENT = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=False, autoescape=False)


DEFAULT_PROMPTS = Path(__file__).with_name("default.yaml")


@dataclass(frozen=True)
class PromptSet:
    templates: dict[str, jinja2.Template]
    digest: str
    """sha256 of the prompt file: part of the run's protocol."""

    def render(self, name: str, **variables: Any) -> str:
        return self.templates[name].render(**variables).strip()


def load_prompts(path: Path | None = None) -> PromptSet:
    """Read and compile a prompt file; problems are input errors naming the file (and line)."""
    path = path or DEFAULT_PROMPTS
    try:
        text = path.read_text(encoding="utf-8")
        data = yaml.safe_load(text)
    except OSError as error:
        raise InputError(f"{path}: cannot read prompts: {error.strerror}") from None
    except yaml.YAMLError as error:
        raise yaml_input_error(path, error) from None
    missing = [name for name in _TEMPLATE_NAMES if not isinstance(data, dict) or name not in data]
    if missing:
        raise InputError(f"{path}: field '{missing[0]}': missing template")
    templates = {}
    for name in _TEMPLATE_NAMES:
        try:
            templates[name] = _ENVIRONMENT.from_string(data[name])
        except jinja2.TemplateSyntaxError as error:
            raise InputError(f"{path}: field '{name}': template line {error.lineno}: {error.message}") from None
    return PromptSet(templates, "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16])
