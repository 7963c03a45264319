"""`scripted:FILE.yaml`: replies read from a YAML list, for tests and demos (see docs/DESIGN.md)."""

from __future__ import annotations

from pathlib import Path

from harness.core.errors import InputError, read_text_input
from harness.core.yaml_safe import load_yaml
from harness.models.base import ModelReply, action_reply
from harness.models.replay_model import ReplayModel


def load_script(path: Path) -> list[dict[str, str]]:
    """Validate the script up front, so a bad item is an input error, not a mid-run failure."""
    items = load_yaml(read_text_input(path, "script"), path)
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


def scripted_model(replies: list[dict[str, str]], action_format: str, name: str = "scripted") -> ReplayModel:
    """Plays the script in order (each `bash` item a command in the run's action format); once it runs out,
    empty text (a format error)."""
    played = [
        ModelReply(text=item.get("text", ""))
        if item.get("bash") is None
        else action_reply(item.get("text", ""), item["bash"], action_format, f"call_{number}")
        for number, item in enumerate(replies, start=1)
    ]
    return ReplayModel(name, played)
