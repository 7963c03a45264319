"""Turn a `--model` spec into a fresh model per episode; problems surface before the run starts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from harness.errors import InputError
from harness.models import Model
from harness.models.oracle import OracleModel
from harness.models.scripted import ScriptedModel, load_script
from harness.tasks import Task

ModelFactory = Callable[[Task], Model]


def model_factory(spec: str, action_format: str, tasks: list[Task], tasks_dir: Path) -> ModelFactory:
    """Validate the spec against the selected tasks and return a per-episode constructor."""
    if spec == "oracle":
        for task in tasks:
            if not task.solution:
                raise InputError(
                    f"{tasks_dir / (task.domain + '.jsonl')}: task {task.id!r}: field 'solution': "
                    "missing, needed by --model oracle"
                )
        return lambda task: OracleModel(task.solution or "", action_format)
    if spec.startswith("scripted:"):
        replies = load_script(Path(spec.removeprefix("scripted:")))
        return lambda task: ScriptedModel(replies, action_format, name=spec)
    raise InputError(
        f"--model: {spec!r} is not available: use oracle or scripted:FILE.yaml "
        "(provider models through litellm are not wired in yet)"
    )
