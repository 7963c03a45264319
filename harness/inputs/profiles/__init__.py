"""Benchmark profiles: a benchmark's protocol as a versioned data file (`--profile NAME|FILE`).

A profile names its benchmark and version and holds the run settings that benchmark runs with (`settings`: the
settings file's fields, files relative to the profile), each solver's arguments under it (`solvers`), the
graders its rules replace (`graders`: a task's grader -> the benchmark's own, e.g. its tolerances) and the
resolution its collections keep their pages at (`page_images`: the benchmark's import's default). Under a
profile, a setting's value comes from (last wins): the runner's defaults, the profile, the settings file, the
flags (`model_args` merged by key: a flag's key wins, the profile's others stay); run.yaml records the
profile's name, version and digest (its file and every file it names) and the settings given over it. One
ships per seed benchmark (`agora.yaml`, `mudabench.yaml`, `findocmre.yaml`); a user copies one and edits it.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from harness.core.errors import InputError, read_text_input
from harness.core.report_sections import REPORT_SECTIONS
from harness.core.yaml_safe import compose_yaml, load_yaml
from harness.grading import GRADERS
from harness.grading.judge_protocol import packaged_protocol
from harness.inputs.collections.pdf_images import MAX_DPI
from harness.inputs.config import RunConfig, check_setting, setting_names
from harness.inputs.tasks import Task

__all__ = [
    "DEFAULT_PROFILE",
    "PROFILES_DIR",
    "Profile",
    "apply_profile",
    "graded_as_profiled",
    "load_profile",
    "profile_names",
]

PROFILES_DIR = Path(__file__).parent
DEFAULT_PROFILE = "agora"
"""The profile of a task set that names no benchmark (AGORA's protocol is the runner's defaults)."""
_FIELDS = ("profile", "version", "benchmark", "description", "settings", "solvers", "graders", "report", "page_images")
_REQUIRED = ("profile", "version", "benchmark")


@dataclass(frozen=True)
class Profile:
    name: str
    version: str
    benchmark: str
    path: Path
    settings: dict[str, Any]
    """Run settings by name, checked; files resolved against the profile's folder."""
    solvers: dict[str, dict[str, str]]
    """Solver name -> its arguments under this benchmark (files resolved as settings are)."""
    graders: dict[str, str]
    """A task's grader -> the grader that grades it under this benchmark (its own tolerances); none: as the
    task file says."""
    digest: str
    """sha256 of the profile file and of every file it names, in order."""
    lines: dict[str, int]
    description: str = ""
    report: tuple[str, ...] = ()
    """The report sections its benchmark's report shows (core/report_sections.py); none: every one."""
    page_images: int | None = None
    """The resolution (dpi) the benchmark's collections keep their pages at: its import's default (`--page-images`);
    None: the profile says none."""

    def where(self, name: str) -> str:
        return f"{self.path}:{self.lines.get(name, 1)}: field 'settings.{name}'"

    @property
    def shipped(self) -> bool:
        """One of the package's own profiles (run.yaml then names it without its path)."""
        return self.path.parent == PROFILES_DIR.resolve()


def profile_names() -> list[str]:
    return sorted(path.stem for path in PROFILES_DIR.glob("*.yaml"))


def load_profile(spec: str, where: str = "--profile") -> Profile:
    """The profile SPEC names: a shipped one by name, or a profile file; every problem one line naming the file,
    line and field."""
    path = PROFILES_DIR / f"{spec}.yaml" if spec in profile_names() else Path(spec)
    if not path.is_file():
        raise InputError(f"{where} {spec}: no such profile (one of {', '.join(profile_names())}, or a profile file)")
    text = read_text_input(path, "profile")
    node, data = compose_yaml(text, path), load_yaml(text, path)
    if not isinstance(data, dict) or not isinstance(node, yaml.MappingNode):
        raise InputError(f"{path}:1: a profile is a mapping (profile, version, benchmark, settings, solvers)")
    lines = {str(key.value): key.start_mark.line + 1 for key, _ in node.value}
    for key in data:
        if key not in _FIELDS:
            raise InputError(f"{path}:{lines.get(str(key), 1)}: field '{key}': unknown (one of {', '.join(_FIELDS)})")
    for key in _REQUIRED:
        if not isinstance(data.get(key), str | int | float) or isinstance(data.get(key), bool):
            raise InputError(f"{path}:{lines.get(key, 1)}: field '{key}': required, a string")
    named: list[Path] = []
    settings = _settings(path, data.get("settings") or {}, _nested_lines(node, "settings"), named)
    solvers = _solvers(path, data.get("solvers") or {}, lines.get("solvers", 1), named)
    graders = _graders(path, data.get("graders") or {}, _nested_lines(node, "graders"))
    report = _report(path, data.get("report"), lines.get("report", 1))
    page_images = _page_images(path, data.get("page_images"), lines.get("page_images", 1))
    digest = hashlib.sha256(path.read_bytes())
    for file in named:
        digest.update(b"\0" + file.name.encode() + b"\0" + file.read_bytes())
    return Profile(
        name=str(data["profile"]),
        version=str(data["version"]),
        benchmark=str(data["benchmark"]),
        path=path.resolve(),
        settings=settings,
        solvers=solvers,
        graders=graders,
        digest="sha256:" + digest.hexdigest()[:16],
        lines=_nested_lines(node, "settings"),
        description=str(data.get("description") or ""),
        report=report,
        page_images=page_images,
    )


def _report(path: Path, raw: Any, line: int) -> tuple[str, ...]:
    """The report sections a profile names; each must be one of `REPORT_SECTIONS`."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(name, str) for name in raw):
        raise InputError(f"{path}:{line}: field 'report': a list of report sections ({', '.join(REPORT_SECTIONS)})")
    for name in raw:
        if name not in REPORT_SECTIONS:
            raise InputError(
                f"{path}:{line}: field 'report': {name!r} is not a report section (one of {', '.join(REPORT_SECTIONS)})"
            )
    return tuple(raw)


def _nested_lines(node: yaml.MappingNode, field: str) -> dict[str, int]:
    for key, value in node.value:
        if key.value == field and isinstance(value, yaml.MappingNode):
            return {str(k.value).replace("-", "_"): k.start_mark.line + 1 for k, _ in value.value}
    return {}


def _settings(path: Path, raw: Any, lines: dict[str, int], named: list[Path]) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise InputError(f"{path}:1: field 'settings': a mapping of setting: value")
    settings: dict[str, Any] = {}
    for key, value in raw.items():
        name = str(key).replace("-", "_")
        where = f"{path}:{lines.get(name, 1)}: field 'settings.{key}'"
        if name not in setting_names() or name in ("model", "domain", "profile"):
            raise InputError(f"{where}: not a setting a profile may set")
        checked = check_setting(name, value, where)
        if name == "judge_prompt" and isinstance(checked, Path) and not (path.parent / checked).is_file():
            checked = packaged_protocol(str(checked)) or checked  # a protocol the package ships, by its name
        if isinstance(checked, Path):
            checked = _named_file(path, checked, where, named)
        settings[name] = checked
    return settings


def _solvers(path: Path, raw: Any, line: int, named: list[Path]) -> dict[str, dict[str, str]]:
    if not isinstance(raw, dict) or not all(isinstance(args, dict | type(None)) for args in raw.values()):
        raise InputError(f"{path}:{line}: field 'solvers': a mapping of solver: {{argument: value}}")
    solvers: dict[str, dict[str, str]] = {}
    for solver, args in raw.items():
        resolved = {}
        for key, value in (args or {}).items():
            text = str(value).lower() if isinstance(value, bool) else str(value)  # YAML's false: `false`
            candidate = path.parent / text
            if candidate.is_file():  # an argument naming a file beside the profile: resolved, and in the digest
                text = str(_named_file(path, Path(text), f"{path}:{line}: field 'solvers.{solver}.{key}'", named))
            resolved[str(key)] = text
        solvers[str(solver)] = resolved
    return solvers


def _graders(path: Path, raw: Any, lines: dict[str, int]) -> dict[str, str]:
    if not isinstance(raw, dict):
        raise InputError(f"{path}:1: field 'graders': a mapping of a task's grader: the grader used instead")
    for key, value in raw.items():
        for name in (key, value):
            if name not in GRADERS:
                where = f"{path}:{lines.get(str(key), 1)}: field 'graders.{key}'"
                raise InputError(f"{where}: {name!r} is not a grader (one of {', '.join(GRADERS)})")
    return {str(key): str(value) for key, value in raw.items()}


def _page_images(path: Path, raw: Any, line: int) -> int | None:
    if raw is None:
        return None
    if not isinstance(raw, int) or isinstance(raw, bool) or not 0 < raw <= MAX_DPI:
        raise InputError(f"{path}:{line}: field 'page_images': {raw!r} is not a resolution from 1 to {MAX_DPI} dpi")
    return raw


def _named_file(profile: Path, file: Path, where: str, named: list[Path]) -> Path:
    resolved = file if file.is_absolute() else (profile.parent / file)
    if not resolved.is_file():
        raise InputError(f"{where}: {file}: no such file (relative to the profile's folder)")
    named.append(resolved)
    return resolved.resolve()


def graded_as_profiled(tasks: list[Task], profile: Profile) -> list[Task]:
    """TASKS with each grader the profile replaces replaced (the episode's start records the grader used)."""
    if not profile.graders:
        return tasks
    return [dataclasses.replace(task, grader=profile.graders.get(task.grader, task.grader)) for task in tasks]


def apply_profile(config: RunConfig, profile: Profile, given: frozenset[str]) -> tuple[RunConfig, list[str]]:
    """CONFIG with the profile's settings wherever GIVEN (the settings the file and the flags set) does not hold
    them (its model arguments beside the given ones, a given key winning), what the profile set kept in its
    `profiled`, and the names of the profile's settings given over it (run.yaml records them)."""
    taken = {name: value for name, value in profile.settings.items() if name not in given}
    overrides = sorted(
        name
        for name, value in profile.settings.items()
        if name in given and name != "model_args" and getattr(config, name) != value
    )
    if "model_args" in given and "model_args" in profile.settings:  # merged by key: a flag's wins, the rest stay
        profiled, flagged = _pairs(profile.settings["model_args"]), _pairs(config.model_args)
        kept = [f"{key}={value}" for key, value in profiled.items() if key not in flagged]
        taken["model_args"] = [*kept, *config.model_args]
        if any(flagged[key] != value for key, value in profiled.items() if key in flagged):
            overrides = sorted([*overrides, "model_args"])
    return dataclasses.replace(config, **taken, profiled=dict(profile.settings)), overrides


def _pairs(items: list[str]) -> dict[str, str]:
    """`key=value` items by key, their values as written (`--model-arg` reads them; the last of a key wins)."""
    return {key.strip(): value for key, _, value in (item.partition("=") for item in items)}
