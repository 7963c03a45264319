"""The run folder, `results/<run-id>/`: its layout, its lock, and reading and writing its records.

run.yaml        resolved config, protocol, versions, sandbox facts, collection hashes (run_record.py)
results.jsonl   one row per finished episode attempt (results.py)
summary.json    the per-domain table
failure_labels.jsonl  the judges' failure modes of wrong episodes (`annotate`; failure_labels.py)
fact_judgments.jsonl  the intermediate facts each episode stated, as judged (`annotate --facts`; fact_judgments.py)
episodes/<domain>/<task>.jsonl  trajectories (epoch k > 1: <task>~epoch<k>.jsonl); earlier attempts under previous/
images/<sha256>.<ext>  every image a model was sent, once, by its hash (image_store.py)
.lock           held (flock) by the runner writing the folder; names its holder
invocations     the starts of the run whose E2B sandboxes may still be running, one id a line
                (run/sandboxing/leftovers.py)
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import IO

from harness.core.episode_key import EpisodeKey
from harness.core.errors import InputError
from harness.core.names import file_name
from harness.core.yaml_safe import dump_yaml, load_record
from harness.records.image_store import ImageStore
from harness.records.results import ResultRow, latest_rows, read_rows
from harness.records.run_record import RunRecord


@dataclass(frozen=True)
class RunFolder:
    path: Path

    @property
    def record_path(self) -> Path:
        return self.path / "run.yaml"

    @property
    def results_path(self) -> Path:
        return self.path / "results.jsonl"

    @property
    def regraded_path(self) -> Path:
        """Where `replay --regrade` writes its rows, beside the run's own."""
        return self.path / "results.regraded.jsonl"

    @property
    def failure_labels_path(self) -> Path:
        """Where `annotate` writes the judges' failure modes of wrong episodes (records/failure_labels.py)."""
        return self.path / "failure_labels.jsonl"

    @property
    def fact_judgments_path(self) -> Path:
        """Where `annotate --facts` writes the stated facts of each episode (records/fact_judgments.py)."""
        return self.path / "fact_judgments.jsonl"

    @property
    def summary_path(self) -> Path:
        return self.path / "summary.json"

    @property
    def episodes_dir(self) -> Path:
        return self.path / "episodes"

    @property
    def images(self) -> ImageStore:
        """The images the run's models were sent, stored by hash (image_store.py)."""
        return ImageStore(self.path)

    @property
    def lock_path(self) -> Path:
        return self.path / ".lock"

    @property
    def invocations_path(self) -> Path:
        return self.path / "invocations"

    def read_invocations(self) -> list[str]:
        """The starts of the run not known to have left nothing running (none before the first)."""
        if not self.invocations_path.exists():
            return []
        return self.invocations_path.read_text(encoding="utf-8").split()

    def write_invocations(self, invocations: list[str]) -> None:
        write_atomic(self.invocations_path, "".join(f"{invocation}\n" for invocation in invocations))

    def trajectory_path(self, domain: str, task_id: str, epoch: int = 1) -> Path:
        """episodes/<domain>/<task file name>.jsonl, `<task file name>~epoch<k>.jsonl` for epoch k > 1; distinct
        episodes never share a file (names.file_name: a kept-as-is name has no `~`, a hashed one ends in hex)."""
        suffix = "" if epoch == 1 else f"~epoch{epoch}"
        return self.episodes_dir / file_name(domain) / f"{file_name(task_id)}{suffix}.jsonl"

    def trajectories(self) -> list[Path]:
        """Every current trajectory (earlier attempts under previous/ are not)."""
        return sorted(self.episodes_dir.glob("*/*.jsonl"))

    def read_record(self) -> RunRecord:
        if not self.record_path.is_file():
            raise InputError(f"{self.path}: not a run folder (no run.yaml)")
        data = load_record(self.record_path.read_text(encoding="utf-8"), self.record_path)
        if not isinstance(data, dict):
            raise InputError(f"{self.record_path}:1: not a run record (a mapping of sections)")
        try:
            return RunRecord.from_dict(data)
        except KeyError as error:
            raise InputError(f"{self.record_path}: field {error}: missing") from None
        except (TypeError, ValueError, AttributeError) as error:
            raise InputError(f"{self.record_path}: not a run record: {error}") from None

    def write_record(self, record: RunRecord) -> None:
        write_atomic(self.record_path, dump_yaml(record.to_dict()))

    def rows(self) -> list[ResultRow]:
        """Every complete results row, in file order."""
        return read_rows(self.results_path)

    def latest_rows(self) -> dict[EpisodeKey, ResultRow]:
        """The latest row per (domain, task id, epoch)."""
        return latest_rows(self.rows())

    def keep_previous_attempt(self, domain: str, task_id: str, epoch: int = 1) -> None:
        """A re-run episode's earlier trajectory moves to episodes/<domain>/previous/, kept for audit."""
        path = self.trajectory_path(domain, task_id, epoch)
        if not path.exists():
            return
        folder = path.parent / "previous"
        folder.mkdir(exist_ok=True)
        attempt = 1 + len(list(folder.glob(f"{path.stem}.*.jsonl")))
        path.rename(folder / f"{path.stem}.{attempt}.jsonl")

    def lock(self) -> RunLock:
        """Create the folder if needed and hold its lock; another live runner's lock is an InputError."""
        self.path.mkdir(parents=True, exist_ok=True)
        handle = self.lock_path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise InputError(f"--run-id {self.path.name}: the run folder is in use by {holder}") from None
        handle.seek(0)
        handle.truncate()
        started = datetime.now(timezone.utc).isoformat(timespec="seconds")
        handle.write(f"pid {os.getpid()} on {socket.gethostname()}, since {started}\n")
        handle.flush()
        return RunLock(handle)


@dataclass
class RunLock:
    """Released by `release`, or by the OS when the runner dies (kill -9 included)."""

    handle: IO[str]

    def release(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.handle.close()


def find_run_folder(path: Path) -> RunFolder:
    """The run folder holding PATH (itself or a parent with run.yaml)."""
    found = next((p for p in [path, *path.parents] if (p / "run.yaml").is_file()), None)
    if found is None:
        raise InputError(f"{path}: no run.yaml in this folder or above it")
    return RunFolder(found)


def write_atomic(path: Path, text: str) -> None:
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)
