"""Task records: loading and validating task files, and finding each domain's collection."""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any

from harness.core.episode_key import EpisodeKey
from harness.core.errors import InputError
from harness.core.facts import FactRow, parse_facts
from harness.core.names import check_domain_name, check_task_id, file_name, is_domain_name
from harness.grading import GRADERS, GoldAnswerError, GoldSpec
from harness.inputs.links import contained, refuse_links_out_of


def _in_file(kind: type | tuple[type, ...], default: Any = None, **options: Any) -> Any:
    """A field a task line may hold, with the JSON type it must have there."""
    return field(default=default, metadata={"task_file": kind}, **options)


@dataclass(frozen=True)
class Task:
    """One question; `answer` and `solution` never enter the sandbox or the model's prompt."""

    id: str = field(metadata={"task_file": str})
    domain: str = field(metadata={"task_file": str})
    question: str = field(metadata={"task_file": str})
    answer: str = field(metadata={"task_file": str})
    answer_format: str | None = _in_file(str)
    grader: str = _in_file(str, "numeric")
    solution: str | None = _in_file(str)
    evidence: list[str] = field(default_factory=list, metadata={"task_file": list})
    metadata: dict[str, Any] = field(default_factory=dict, metadata={"task_file": dict})
    rel_tol: float | None = _in_file((int, float))
    canary: bool = _in_file(bool, False)
    """The answer exists only on the host: a correct answer means the sandbox leaked it (containment failure)."""
    leak_allow: str | None = _in_file(str)
    """Why the gold may appear verbatim in the collection (the pre-run leakage check then allows it)."""
    abs_tol: float | None = _in_file((int, float))
    """Absolute tolerance for the `numeric_tol` grader (the tolerance of a zero gold)."""
    type: str | None = _in_file(str)
    """The task's type (e.g. `multiple_choice`): the report gives per-type accuracy and their mean."""
    collection: str | None = _in_file(str)
    """The task's own collection folder under the collections dir; None means the domain's."""
    facts: tuple[FactRow, ...] = _in_file(list, ())
    """The intermediate facts the answer is computed from, as rows of cells (harness/inputs/facts.py); like the
    gold, never in the sandbox or the prompt."""
    groups: dict[str, str] = field(default_factory=dict, metadata={"task_file": dict})
    """Grouping name -> this task's value (`{"language": "zh", "charts": "M"}`): the report gives accuracy and the
    overall score per value of each grouping. Not part of what the task asks (not in its digest)."""
    epoch: int = 1
    """Which repeat of the task an episode is (1 .. --epochs): set by the runner, never read from a task file,
    and not part of what the task asks (not in its digest)."""

    @property
    def episode(self) -> EpisodeKey:
        """The key of the episode this task stands for, as its row's `ResultRow.episode`."""
        return EpisodeKey(self.domain, self.id, self.epoch)

    @property
    def gold(self) -> GoldSpec:
        return GoldSpec(self.answer, self.answer_format, self.rel_tol, self.abs_tol, self.question)


_FILE_FIELDS = {spec.name: spec for spec in fields(Task) if "task_file" in spec.metadata}
_REQUIRED = {
    name: spec.metadata["task_file"]
    for name, spec in _FILE_FIELDS.items()
    if spec.default is MISSING and spec.default_factory is MISSING
}
_OPTIONAL = {name: spec.metadata["task_file"] for name, spec in _FILE_FIELDS.items() if name not in _REQUIRED}
"""A task line's fields and their JSON types, as the `Task` declares them (its `epoch` is the runner's)."""


def task_digest(task: Task) -> str:
    """sha256 of what the task asks and how it is graded; a resume re-runs a task whose digest changed."""
    asked: dict[str, Any] = {
        "question": task.question,
        "answer": task.answer,
        "answer_format": task.answer_format,
        "grader": task.grader,
        "rel_tol": task.rel_tol,
    }
    # Newer fields enter only when set, so the digests of older tasks (and resumes of their runs) stay the same.
    asked |= {key: value for key, value in (("abs_tol", task.abs_tol), ("collection", task.collection)) if value}
    if task.facts:
        asked["facts"] = [row.to_dict() for row in task.facts]
    return "sha256:" + hashlib.sha256(json.dumps(asked, sort_keys=True).encode()).hexdigest()[:16]


def available_domains(tasks_dir: Path) -> list[str]:
    """Task files whose name is a valid domain name (a `...jsonl` or `.x.jsonl` is not a domain)."""
    return sorted(path.stem for path in tasks_dir.glob("*.jsonl") if is_domain_name(path.stem))


def resolve_domains(spec: str, tasks_dir: Path) -> list[str]:
    """`law`, `law,finance` or `all` to a list of domain names that have task files."""
    known = available_domains(tasks_dir)
    if spec == "all":
        if not known:
            raise InputError(f"{tasks_dir}: no task files (*.jsonl)")
        return known
    domains = [name.strip() for name in spec.split(",") if name.strip()]
    if not domains:
        raise InputError("--domain: empty domain list")
    for name in domains:
        check_domain_name(name, "--domain")
        if name not in known:
            raise InputError(
                f"--domain: unknown domain {name!r}: {tasks_dir / (name + '.jsonl')} not found "
                f"(known: {', '.join(known) or 'none'})"
            )
    return list(dict.fromkeys(domains))


def load_task_file(path: Path) -> list[Task]:
    """Parse and validate every line; the first problem raises `InputError` naming file, line and field."""
    tasks: list[Task] = []
    seen: dict[str, int] = {}
    file_names: dict[str, str] = {}
    with path.open("rb") as lines:
        for number, raw in enumerate(lines, start=1):
            where = f"{path}:{number}"
            line = _decode(raw, where)
            if not line.strip():
                continue
            row = _parse_json(line, where)
            task = _task_from_row(row, where)
            if task.domain != path.stem:
                raise InputError(f"{where}: field 'domain': {task.domain!r} does not match the file name")
            if task.id in seen:
                raise InputError(f"{where}: field 'id': duplicate id {task.id!r} (first on line {seen[task.id]})")
            name = file_name(task.id)
            if name in file_names:  # a hash collision: never expected, but two tasks must never share a log
                raise InputError(f"{where}: field 'id': {task.id!r} and {file_names[name]!r} map to one file name")
            seen[task.id], file_names[name] = number, task.id
            tasks.append(task)
    return tasks


def _decode(raw: bytes, where: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        column = len(raw[: error.start].decode("utf-8", errors="replace")) + 1  # characters, as an editor counts
        cut = " (the line ends inside a character: cut off?)" if error.reason == "unexpected end of data" else ""
        raise InputError(f"{where}: invalid UTF-8 (byte {raw[error.start]:#04x} at column {column}){cut}") from None


def _parse_json(line: str, where: str) -> dict[str, Any]:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as error:
        if error.msg.startswith("Unterminated string"):  # json names where the string starts, not where it is cut
            raise InputError(
                f"{where}: malformed JSON: the line ends inside the string that starts at column {error.colno} "
                "(cut off?)"
            ) from None
        if error.pos >= len(line.rstrip("\r\n")):  # the column past the line's last character, said as such
            raise InputError(f"{where}: malformed JSON: the line ends before its JSON does (cut off?)") from None
        raise InputError(f"{where}: malformed JSON: {error.msg} (column {error.colno})") from None
    except RecursionError:
        raise InputError(f"{where}: malformed JSON: nested too deeply") from None
    if not isinstance(row, dict):
        raise InputError(f"{where}: a task must be a JSON object")
    return row


def _task_from_row(row: dict[str, Any], where: str) -> Task:
    for name, kind in _REQUIRED.items():
        if name not in row:
            raise InputError(f"{where}: field '{name}': missing")
        if not isinstance(row[name], kind) or not row[name].strip():
            raise InputError(f"{where}: field '{name}': must be a non-empty string")
    for name, kinds in _OPTIONAL.items():
        if row.get(name) is not None and not isinstance(row[name], kinds):
            raise InputError(f"{where}: field '{name}': wrong type {type(row[name]).__name__}")
    check_task_id(row["id"], where)
    if row.get("leak_allow") is not None and not row["leak_allow"].strip():
        raise InputError(f"{where}: field 'leak_allow': must give the reason the gold may appear in the collection")
    for name in ("rel_tol", "abs_tol"):
        tolerance = row.get(name)
        if tolerance is not None and (isinstance(tolerance, bool) or not math.isfinite(tolerance) or tolerance < 0):
            raise InputError(f"{where}: field '{name}': {tolerance!r} is not a finite non-negative number")
    for name in ("type", "collection"):
        if row.get(name) is not None and not row[name].strip():
            raise InputError(f"{where}: field '{name}': must be a non-empty string")
    if row.get("collection") is not None:
        check_domain_name(row["collection"], f"{where}: field 'collection'")
    unknown = sorted(set(row) - set(_REQUIRED) - set(_OPTIONAL))
    if unknown:
        raise InputError(f"{where}: field '{unknown[0]}': unknown field")
    groups = row.get("groups") or {}
    for name, value in groups.items():
        if not name.strip() or not isinstance(value, str) or not value.strip():
            raise InputError(f"{where}: field 'groups': {name!r} must map to a non-empty string")
    grader_name = row.get("grader") or "numeric"
    if grader_name not in GRADERS:
        raise InputError(f"{where}: field 'grader': unknown grader {grader_name!r} (known: {', '.join(GRADERS)})")
    given = {name: value for name, value in row.items() if value is not None}
    normalized = {
        "grader": grader_name,
        "evidence": list(row.get("evidence") or []),
        "metadata": dict(row.get("metadata") or {}),
        "groups": {name.strip(): value.strip() for name, value in groups.items()},
        "canary": bool(row.get("canary")),
        "facts": parse_facts(row.get("facts") or [], where),
    }
    task = Task(**(given | normalized))
    try:
        GRADERS[grader_name].validate(task.gold)
    except GoldAnswerError as error:
        raise InputError(f"{where}: field 'answer': {error}") from None
    return task


def collection_of(task: Task) -> str:
    """The collection a task's sandbox mounts: its own when it names one, else its domain's."""
    return task.collection or task.domain


def collection_path(collections_dir: Path, domain: str, follow_links: bool = False) -> Path:
    """The collection's folder, resolved: what the sandbox mounts and the run records (`inputs/links.py`)."""
    path = collections_dir / domain
    if not path.is_dir():
        raise InputError(
            f"{path}: collection folder for domain {domain!r} not found "
            "(set --collections-dir or HARNESS_COLLECTIONS_DIR)"
        )
    resolved = contained(collections_dir, path, follow_links)
    refuse_links_out_of(resolved)
    return resolved


def task_file(tasks_dir: Path, domain: str, follow_links: bool = False) -> Path:
    """The domain's task file, as named (its errors name it so); refused when it is a link out of TASKS_DIR
    (`inputs/links.py`)."""
    path = tasks_dir / f"{domain}.jsonl"
    contained(tasks_dir, path, follow_links)
    return path


def shard_tasks(tasks: list[Task], shard: str | None) -> list[Task]:
    """`i/n`: the tasks whose stable hash falls in part i of n, the same on every machine and run."""
    if shard is None:
        return tasks
    match = re.fullmatch(r"(\d+)/(\d+)", shard)
    if not match or not 1 <= int(match.group(1)) <= int(match.group(2)):
        raise InputError(f"--shard: {shard!r} is not i/n with 1 <= i <= n")
    index, count = int(match.group(1)) - 1, int(match.group(2))
    return [task for task in tasks if _stable_hash(f"{task.domain}/{task.id}") % count == index]


def _stable_hash(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def select_tasks(tasks: list[Task], task_ids: list[str], limit: int | None) -> list[Task]:
    """Filter by `--task-id` (unknown ids are an error) and cut to `--limit` per domain."""
    if task_ids:
        known = {task.id for task in tasks}
        missing = [task_id for task_id in task_ids if task_id not in known]
        if missing:
            raise InputError(f"--task-id: unknown task id {missing[0]!r}")
        tasks = [task for task in tasks if task.id in task_ids]
    if limit is not None:
        per_domain: dict[str, int] = {}
        kept = []
        for task in tasks:
            per_domain[task.domain] = per_domain.get(task.domain, 0) + 1
            if per_domain[task.domain] <= limit:
                kept.append(task)
        tasks = kept
    return tasks
