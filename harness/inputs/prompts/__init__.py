"""Prompt templates: YAML files of Jinja2 templates (`default.yaml`, the agent's, and `agent-vision.yaml`, the
agent's under `--vision`, ship with the package)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from harness.core.errors import InputError, read_text_input
from harness.core.yaml_safe import load_yaml

__all__ = ["PromptSet", "load_prompts"]


_SAMPLE_VARIABLES: dict[str, dict[str, Any]] = {
    "system": {
        "action_format": "toolcall",
        "max_turns": 200,
        "time_limit_s": 3600,
        "command_timeout_s": 600,
        "tools": "jq, rg",
    },
    "task": {"question": "?", "answer_format": "x.xx%"},
    "observation": {
        "exit_code": 0,
        "stdout": "",
        "stderr": "",
        "timed_out": False,
        "truncated": False,
        "raw_bytes": 0,
        "duration_s": 0.1,
        "turns_left": 1,
        "seconds_left": 1,
    },
    "format_error": {"problem": "?", "action_format": "toolcall", "turns_left": 1, "seconds_left": 1},
}
"""Each template with the variables the loop gives it: a template using any other fails when it loads."""
_TEMPLATE_NAMES = tuple(_SAMPLE_VARIABLES)
_ENVIRONMENT = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=False, autoescape=False)


DEFAULT_PROMPTS = Path(__file__).with_name("default.yaml")
VISION_PROMPTS = Path(__file__).with_name("agent-vision.yaml")
"""The agent's prompts when it can look (`--vision`): they name view_image and where the page images are."""


@dataclass(frozen=True)
class PromptSet:
    templates: dict[str, jinja2.Template]
    digest: str
    """sha256 of the prompt file: part of the run's protocol."""

    def render(self, name: str, **variables: Any) -> str:
        return self.templates[name].render(**variables).strip()


def load_prompts(path: Path | None = None, vision: bool = False) -> PromptSet:
    """Read and compile a prompt file (without one, the shipped one for the agent, with or without VISION);
    problems are input errors naming the file (and line)."""
    path = path or (VISION_PROMPTS if vision else DEFAULT_PROMPTS)
    text = read_text_input(path, "prompts")
    data = load_yaml(text, path)
    missing = [name for name in _TEMPLATE_NAMES if not isinstance(data, dict) or name not in data]
    if missing:
        raise InputError(f"{path}: field '{missing[0]}': missing template")
    templates = {}
    for name in _TEMPLATE_NAMES:
        try:
            templates[name] = _ENVIRONMENT.from_string(data[name])
            templates[name].render(**_SAMPLE_VARIABLES[name])
        except jinja2.TemplateSyntaxError as error:
            raise InputError(f"{path}: field '{name}': template line {error.lineno}: {error.message}") from None
        except jinja2.TemplateError as error:
            raise InputError(f"{path}: field '{name}': {error}") from None
    return PromptSet(templates, "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16])
