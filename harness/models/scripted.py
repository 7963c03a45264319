"""`scripted:FILE.yaml`: replies read from a YAML list, for tests and demos (see docs/DESIGN.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from harness.core.errors import InputError, read_text_input, yaml_input_error
from harness.models.base import ModelReply, action_reply, estimate_tokens


def load_script(path: Path) -> list[dict[str, str]]:
    """Validate the script up front, so a bad item is an input error, not a mid-run failure."""
    try:
        items = yaml.safe_load(read_text_input(path, "script"))
    except yaml.YAMLError as error:
        raise yaml_input_error(path, error) from None
    if not isinstance(items, list):
        raise InputError(f"{path}: a script is a YAML list of replies")
    replies = []
    for index, item in enumerate(items, start=1):
        if isinstance(item, str):
            item = {"text": item}
        if not isinstance(item, dict) or set(item) - {"text", "bash"}:
            raise InputError(f"{path}: item {index}: a reply is a string or a mapping with 'text' and/or 'bash'")
        if not all(isinstance(value, str) for value in item.values()):
            raise InputError(f"{path}: item {index}: 'text' and 'bash' must be strings")
        replies.append(item)
    return replies


class ScriptedModel:
    """Plays the script in order; once it runs out, replies with empty text (a format error)."""

    context_window = None

    def __init__(self, replies: list[dict[str, str]], action_format: str, name: str = "scripted"):
        self.name = name
        self._replies = list(replies)
        self._action_format = action_format
        self._position = 0

    def count_tokens(self, messages: list[dict[str, Any]]) -> int:
        return estimate_tokens(messages)

    def query(self, messages: list[dict[str, Any]], timeout_s: float) -> ModelReply:
        if self._position >= len(self._replies):
            return ModelReply(text="")
        item = self._replies[self._position]
        self._position += 1
        text, command = item.get("text", ""), item.get("bash")
        if command is None:
            return ModelReply(text=text)
        return action_reply(text, command, self._action_format, f"call_{self._position}")
