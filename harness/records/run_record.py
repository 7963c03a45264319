"""run.yaml, the run's record: how the run was made, written as it starts and noted at each resume; an
imported run's says where its episodes came from. The one place the file's keys are named.

Two shapes: a run's (versions of Python and the pinned packages, config, protocol, model, sandbox, collections,
leakage warning) and an import's (`imported`, and the little of the config its files give). Sections an older
harness did not write read back as empty, so old run folders still read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from harness.core.retrieval_stores import StoreUse
from harness.records.events import SandboxFacts
from harness.records.run_settings import ModelSettings, Prices, RunProtocol, RunSettings

R = TypeVar("R", bound=BaseModel)


@dataclass(frozen=True)
class CollectionRecord:
    """A collection the run's episodes read, and its content hash."""

    path: str
    hash: str
    """The digest of its file tree (`sha256-tree:`, each file's relative path and content)."""
    resolved: str | None = None
    """The folder the sandbox mounted, when a link is on the way to `path` (`--follow-links`); else None, not
    written."""

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "hash": self.hash} | ({"resolved": self.resolved} if self.resolved else {})

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CollectionRecord:
        resolved = data.get("resolved")
        return cls(str(data["path"]), str(data["hash"]), str(resolved) if resolved else None)


@dataclass(frozen=True)
class ImportSource:
    """Where an imported run's episodes came from."""

    format: str
    """The trajectory format, e.g. mini-swe-agent-1.1."""
    paths: list[str]
    """The files and folders given to `import` (the key `from`)."""


@dataclass(frozen=True)
class Resumption:
    """One resume of the run: when, how much was left, and what had changed since."""

    at: str
    pending: int
    config: RunSettings
    """The settings the resume ran with."""
    changed_tasks: int = 0
    """Finished tasks run again because their question or gold changed."""
    collections: dict[str, CollectionRecord] = field(default_factory=dict)
    """Collections whose hash changed (only with --allow-protocol-change): what the episodes now run on."""
    protocol: RunProtocol | None = None
    """The protocol the resume ran under, when it differs from the run's."""
    packages: dict[str, str | None] = field(default_factory=dict)
    """The pinned packages' versions the resume ran with, when they differ from the run's."""

    def to_dict(self) -> dict[str, Any]:
        record: dict[str, Any] = {"at": self.at, "pending": self.pending, "config": self.config.model_dump()}
        if self.changed_tasks:
            record["changed_tasks"] = self.changed_tasks
        if self.collections:
            record["collections"] = _collections_dict(self.collections)
        if self.protocol is not None:
            record["protocol"] = self.protocol.model_dump()
        if self.packages:
            record["packages"] = self.packages
        return record

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Resumption:
        return cls(
            str(data["at"]),
            int(data["pending"]),
            _section(RunSettings, data["config"], "resumed.config"),
            int(data.get("changed_tasks") or 0),
            _collections(data.get("collections")),
            None if data.get("protocol") is None else _section(RunProtocol, data["protocol"], "resumed.protocol"),
            dict(data.get("packages") or {}),
        )


@dataclass(frozen=True)
class ProfileRecord:
    """The benchmark profile a run followed (harness/inputs/profiles/): a resume under another digest is refused."""

    name: str
    version: str
    digest: str
    """sha256 of the profile file and every file it names."""
    path: str | None = None
    """A profile file's path; None for a shipped profile."""
    overrides: tuple[str, ...] = ()
    """The profile's settings the settings file or the flags gave other values."""
    report: tuple[str, ...] = ()
    """The report sections the profile names (core/report_sections.py); none: every one (left out)."""

    def to_dict(self) -> dict[str, Any]:
        record: dict[str, Any] = {"name": self.name, "version": self.version, "digest": self.digest}
        if self.path is not None:
            record["path"] = self.path
        if self.overrides:
            record["overrides"] = list(self.overrides)
        if self.report:
            record["report"] = list(self.report)
        return record

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProfileRecord:
        path = data.get("path")
        return cls(
            name=str(data["name"]),
            version=str(data["version"]),
            digest=str(data["digest"]),
            path=None if path is None else str(path),
            overrides=tuple(str(name) for name in data.get("overrides") or ()),
            report=tuple(str(name) for name in data.get("report") or ()),
        )


@dataclass(frozen=True)
class RunRecord:
    """run.yaml as read back."""

    run_id: str
    created: str
    config: RunSettings
    """The settings as harness/inputs/config.py names them (`config_to_dict`); an import's has only model,
    max_turns, time_limit and tasks_dir."""
    tasks: int
    """The selected tasks (an import: the episodes imported)."""
    harness_version: str | None = None
    python: str | None = None
    packages: dict[str, str | None] = field(default_factory=dict)
    """The resolved versions of the packages that shape a request, a record or a grade (litellm first;
    `run/planning/pinned_packages.py` names them); empty in runs older than it."""
    config_hash: str | None = None
    """The protocol's hash, also in every episode_start."""
    protocol: RunProtocol = field(default_factory=RunProtocol)
    """The settings that change what a score means (harness/run/planning/plan.py `protocol_of`): a resume under
    other ones is refused."""
    model: ModelSettings | None = None
    """The model's resolved settings (None in runs older than their record)."""
    sandbox: SandboxFacts = field(default_factory=SandboxFacts)
    """The sandbox backend's facts."""
    collections: dict[str, CollectionRecord] = field(default_factory=dict)
    leakage_warning: str | None = None
    """Tasks whose gold, solution or id is printed in their collection; None when none is."""
    imported: ImportSource | None = None
    """Set for an imported run, whose record has none of the run's sections."""
    resumed: tuple[Resumption, ...] = ()
    prices: Prices | None = None
    """The price the run's costs were computed with (`models/prices.py`, USD per million tokens, and its source);
    None for a model without a cost (oracle, scripted) or an unknown price."""
    label: str | None = None
    """The run's name in report tables (`--label`, or `run/planning/labels.py`'s default); None in older runs and
    imports, which report under their model."""
    profile: ProfileRecord | None = None
    """The benchmark profile the run followed; None in runs from before profiles, and imports."""
    retrieval_stores: tuple[StoreUse, ...] = ()
    """What the retrieval back end held for the run at each of its ends (File Search's stores, deleted or kept) and
    its estimated cost; none for the local back end."""

    def to_dict(self) -> dict[str, Any]:
        """The record in the file's order (that of every run.yaml written so far)."""
        record: dict[str, Any] = {"run_id": self.run_id, "created": self.created}
        if self.label is not None:
            record["label"] = self.label
        if self.imported is not None:
            record["imported"] = {"format": self.imported.format, "from": self.imported.paths}
            record |= {"config": self.config.model_dump(), "tasks": self.tasks}
        else:
            record |= {
                "harness_version": self.harness_version,
                "python": self.python,
            }
            if self.packages:
                record["packages"] = self.packages
            record |= {
                "config": self.config.model_dump(),
                "config_hash": self.config_hash,
                "protocol": self.protocol.model_dump(),
            }
            if self.profile is not None:
                record["profile"] = self.profile.to_dict()
            if self.model is not None:
                record["model"] = self.model.model_dump()
            if self.prices is not None:
                record["prices"] = self.prices.model_dump()
            record |= {
                "sandbox": self.sandbox.model_dump(),
                "collections": _collections_dict(self.collections),
                "tasks": self.tasks,
                "leakage_warning": self.leakage_warning,
            }
            if self.retrieval_stores:
                record["retrieval_stores"] = [store.to_dict() for store in self.retrieval_stores]
        if self.resumed:
            record["resumed"] = [resume.to_dict() for resume in self.resumed]
        return record

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunRecord:
        """Raises KeyError, TypeError or ValueError on a record that is not one."""
        imported = data.get("imported")
        return cls(
            run_id=str(data["run_id"]),
            created=str(data["created"]),
            config=_section(RunSettings, data["config"], "config"),
            tasks=int(data["tasks"]),
            harness_version=data.get("harness_version"),
            python=data.get("python"),
            packages=dict(data.get("packages") or {}),
            config_hash=data.get("config_hash"),
            protocol=_section(RunProtocol, data.get("protocol") or {}, "protocol"),
            model=None if data.get("model") is None else _section(ModelSettings, data["model"], "model"),
            sandbox=_section(SandboxFacts, data.get("sandbox") or {}, "sandbox"),
            collections=_collections(data.get("collections")),
            leakage_warning=data.get("leakage_warning"),
            imported=None if imported is None else ImportSource(str(imported["format"]), list(imported["from"])),
            resumed=tuple(Resumption.from_dict(resume) for resume in data.get("resumed") or []),
            label=None if data.get("label") is None else str(data["label"]),
            prices=None if data.get("prices") is None else _section(Prices, data["prices"], "prices"),
            profile=None if data.get("profile") is None else ProfileRecord.from_dict(data["profile"]),
            retrieval_stores=tuple(StoreUse.from_dict(store) for store in data.get("retrieval_stores") or []),
        )

    @property
    def report_label(self) -> str:
        """What report tables call the run: its label, else (older runs, imports) its model."""
        return self.label or str(self.config.model)


def _section(record: type[R], data: Any, name: str) -> R:
    """Section NAME of a run.yaml as its record; a ValueError naming its field (`protocol.max_turns`) if it is not."""
    try:
        return record.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        place = ".".join(str(part) for part in (name, *first["loc"]))
        raise ValueError(f"field '{place}': {first['msg']}") from None


def _collections(data: Mapping[str, Any] | None) -> dict[str, CollectionRecord]:
    return {str(name): CollectionRecord.from_dict(entry) for name, entry in (data or {}).items()}


def _collections_dict(collections: dict[str, CollectionRecord]) -> dict[str, dict[str, str]]:
    return {name: entry.to_dict() for name, entry in collections.items()}
