"""Epochs: each selected task run K times (`--epochs K`); an episode is (task, epoch).

Raising K on resume only adds the missing epochs (it changes no score already made, so it is not a protocol
change); lowering it is refused, since the run's rows would then hold more epochs than it says.
"""

from __future__ import annotations

import dataclasses

from harness.core.errors import InputError
from harness.inputs.tasks import Task
from harness.records.run_record import RunRecord


def episodes_of(tasks: list[Task], epochs: int) -> list[Task]:
    """Each task once per epoch, epochs of one task together, in task order."""
    return [dataclasses.replace(task, epoch=epoch) for task in tasks for epoch in range(1, epochs + 1)]


def _recorded_epochs(record: RunRecord) -> int:
    """The most epochs the run was ever started or resumed with (1 for runs made before epochs)."""
    configs = [record.config, *(resume.config for resume in record.resumed)]
    return max(config.epochs or 1 for config in configs)


def check_epochs(record: RunRecord, epochs: int) -> None:
    before = _recorded_epochs(record)
    if epochs < before:
        raise InputError(
            f"--epochs {epochs}: run {record.run_id} was run with --epochs {before}; resume with --epochs {before} "
            "or more (more adds the missing epochs), or choose another --run-id"
        )
