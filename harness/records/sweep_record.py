"""sweep.yaml, the record of a sweep folder: which run folders it holds (one per model), its spend cap, and when
it was resumed. The one place the file's name and keys are known."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.yaml_safe import dump_yaml, load_record
from harness.records.run_folder import write_atomic

_SWEEP_RECORD = "sweep.yaml"


@dataclass(frozen=True)
class SweepEntry:
    """One model's run in the sweep."""

    run_id: str
    """Its run folder's name, inside the sweep folder."""
    label: str
    model: str
    """As given (an alias stays an alias)."""


@dataclass(frozen=True)
class SweepRecord:
    sweep_id: str
    created: str
    runs: list[SweepEntry]
    max_cost: float | None
    """The sweep's own spend cap over all of its runs (each run.yaml holds its model's)."""
    resumed: tuple[str, ...] = ()
    """When the same command ran again."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "sweep_id": self.sweep_id,
            "created": self.created,
            "max_cost": self.max_cost,
            "runs": [{"run_id": r.run_id, "label": r.label, "model": r.model} for r in self.runs],
            "resumed": list(self.resumed),
        }


def read_sweep_record(folder: Path) -> SweepRecord | None:
    path = folder / _SWEEP_RECORD
    if not path.is_file():
        return None
    data = load_record(path.read_text(encoding="utf-8"), path)
    runs = [SweepEntry(str(r["run_id"]), str(r["label"]), str(r["model"])) for r in data["runs"]]
    return SweepRecord(
        str(data["sweep_id"]), str(data["created"]), runs, data.get("max_cost"), tuple(data.get("resumed") or ())
    )


def write_sweep_record(folder: Path, record: SweepRecord) -> None:
    write_atomic(folder / _SWEEP_RECORD, dump_yaml(record.to_dict()))
