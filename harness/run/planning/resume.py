"""Resuming a run folder: its record's protocol and collections held against this start's, its domains
against the ones asked, and which finished rows it keeps."""

from __future__ import annotations

from typing import Any

from harness.core.errors import InputError
from harness.inputs.collections.hashing import CollectionFiles, same_collection
from harness.inputs.tasks import (
    Task,
    task_digest,
)
from harness.records.results import ResultRow
from harness.records.run_folder import RunFolder
from harness.records.run_record import ProfileRecord, RunRecord
from harness.run.planning.protocol_plan import profile_changes


def check_resumable(
    folder: RunFolder,
    protocol: dict[str, Any],
    profile: ProfileRecord,
    collections: dict[str, CollectionFiles],
    allow_change: bool,
) -> RunRecord:
    """The run's record, once its protocol and collections are those of this start (or --allow-protocol-change)."""
    if not folder.record_path.is_file():
        raise InputError(f"{folder.path}: exists but holds no run.yaml; choose another --run-id")
    record = folder.read_record()
    recorded = record.protocol.model_dump()
    changes = [
        f"{key} {recorded.get(key)!r} -> {value!r}" for key, value in protocol.items() if recorded.get(key) != value
    ]
    for only_some in ("closed_book", "vision", "zero_shot", "solver", "max_episode_cost"):  # keys only some runs have
        if recorded.get(only_some) and only_some not in protocol:
            changes.append(f"{only_some} {recorded[only_some]!r} -> None")
    changes += profile_changes(record.profile, profile)
    for domain, files in collections.items():
        before = record.collections.get(domain)
        if before is not None and not same_collection(before.hash, files):
            changes.append(f"collection {domain} {before.hash} -> {files.digest}")
    if changes and not allow_change:
        raise InputError(
            f"--run-id {folder.path.name}: the run was made under a different protocol ({'; '.join(changes)}); "
            "resume with the same settings, or pass --allow-protocol-change"
        )
    return record


def check_same_domains(record: RunRecord, domain: str, run_id: str) -> None:
    """A resume runs what the run selected: another --domain would add its rows to this run's (an import's
    record names no domain)."""
    recorded = record.config.domain
    if recorded is not None and _domain_set(recorded) != _domain_set(domain):
        raise InputError(
            f"--run-id {run_id}: the run was made for --domain {recorded!r}, not {domain!r}; "
            f"resume it with --domain {recorded}, or choose another --run-id"
        )


def _domain_set(spec: str) -> set[str]:
    """`law,fin` as `fin, law` is: the order and spaces do not change what is selected."""
    return {name.strip() for name in spec.split(",") if name.strip()}


def kept_rows(folder: RunFolder, episodes: list[Task], redo: bool) -> tuple[list[ResultRow], int]:
    """The finished rows a resume keeps, and how many finished episodes changed since (those run again)."""
    if redo:
        return [], 0
    digests = {task.episode: task_digest(task) for task in episodes}
    latest = folder.latest_rows()
    finished = [row for key, row in latest.items() if key in digests and not row.needs_rerun]
    kept = [row for row in finished if row.task_digest == digests[row.episode]]
    return kept, len(finished) - len(kept)
