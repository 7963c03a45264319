"""`scripted:FILE.yaml`: replies read from a YAML list (or lists per task), for tests and demos (see
docs/DESIGN.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from harness.core.errors import InputError, read_text_input
from harness.core.yaml_safe import load_yaml
from harness.models.base import ModelReply, action_reply, view_reply
from harness.models.replay_model import ReplayModel

Replies = list[dict[str, str]]


@dataclass(frozen=True)
class Script:
    """A scripted model's replies: one list for every task, or lists per task id with a default for the rest."""

    default: Replies | None
    by_task: dict[str, Replies] = field(default_factory=dict)
    """Keyed by task id, or `domain/id` where two domains share an id."""

    def replies_for(self, domain: str, task_id: str) -> Replies | None:
        """The task's replies; None when the script has none for it (and no default)."""
        return self.by_task.get(f"{domain}/{task_id}", self.by_task.get(task_id, self.default))

    def first_view_image(self) -> str | None:
        """Where the script first asks to see an image ('item 2', 'tasks: law-001: item 1'); None if nowhere."""
        lists = [("", self.default or []), *((f"tasks: {task}: ", replies) for task, replies in self.by_task.items())]
        for where, replies in lists:
            for number, item in enumerate(replies, start=1):
                if "view_image" in item:
                    return f"{where}item {number}"
        return None


def load_script(path: Path) -> Script:
    """Validate the script up front, so a bad item is an input error, not a mid-run failure. A script is a list
    of replies, or a mapping `{tasks: {TASK_ID: [replies]}, default: [replies]}`."""
    content = load_yaml(read_text_input(path, "script"), path)
    if isinstance(content, list):
        return Script(_replies(content, path, ""))
    if not isinstance(content, dict) or set(content) - {"tasks", "default"} or not content:
        raise InputError(f"{path}: a script is a YAML list of replies, or a mapping with 'tasks' and/or 'default'")
    tasks = content.get("tasks") or {}
    if not isinstance(tasks, dict):
        raise InputError(f"{path}: field 'tasks': a mapping of task id to a list of replies")
    default = content.get("default")
    return Script(
        None if default is None else _replies(default, path, "default: "),
        {str(task): _replies(replies, path, f"tasks: {task}: ") for task, replies in tasks.items()},
    )


def _replies(items: object, path: Path, where: str) -> Replies:
    if not isinstance(items, list):
        raise InputError(f"{path}: {where}a YAML list of replies")
    replies = []
    for index, item in enumerate(items, start=1):
        if isinstance(item, str):
            item = {"text": item}
        if (
            not isinstance(item, dict)
            or set(item) - {"text", "bash", "view_image"}
            or {"bash", "view_image"} <= set(item)
        ):
            raise InputError(
                f"{path}: {where}item {index}: a reply is a string or a mapping with 'text' and/or one of 'bash' "
                "and 'view_image'"
            )
        if not all(isinstance(value, str) for value in item.values()):
            raise InputError(f"{path}: {where}item {index}: 'text', 'bash' and 'view_image' must be strings")
        replies.append(item)
    return replies


def scripted_model(replies: Replies, action_format: str, name: str = "scripted") -> ReplayModel:
    """Plays the script in order (each `bash` item a command in the run's action format, each `view_image` item
    a view_image call, for runs with --vision); once it runs out, empty text (a format error)."""
    return ReplayModel(name, [_reply(item, action_format, number) for number, item in enumerate(replies, start=1)])


def _reply(item: dict[str, str], action_format: str, number: int) -> ModelReply:
    if "view_image" in item:
        return view_reply(item.get("text", ""), item["view_image"], f"call_{number}")
    if "bash" in item:
        return action_reply(item.get("text", ""), item["bash"], action_format, f"call_{number}")
    return ModelReply(text=item.get("text", ""))
