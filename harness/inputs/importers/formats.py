"""The benchmark formats `tasks import` reads: a name -> module table, each module holding its `FORMAT`. A new
format is a module and a line here; the engine (engine.py) stages, builds, writes and reports for every one."""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from harness.inputs.importers.rows import TaskPlan

FORMATS = {
    "mudabench": "harness.inputs.importers.mudabench",
    "findocmre": "harness.inputs.importers.findocmre",
    "findocmre-paper": "harness.inputs.importers.findocmre_paper",
}
"""The command line's format name -> its module, in the order `tasks import --help` lists them."""


@dataclass(frozen=True)
class CollectionSettings:
    """How a format's collections are converted (harness/inputs/collections/build.py's `CollectionBuildRequest`)."""

    ocr: bool = False
    ocr_language: str | None = None
    page_images: int | None = None
    """Keep each page as an image at this many dots per inch; None: Markdown only."""


class FormatOptions(Protocol):
    """A format's own flags, as a frozen dataclass: each field's metadata is its flag (`option(...)`)."""

    def check(self) -> None:
        """Raise InputError, in one line naming the flag, when a value cannot be used."""
        ...

    def collection_settings(self) -> CollectionSettings: ...

    def describe(self) -> str:
        """What the import report's first line adds about these settings ('' for nothing)."""
        ...


Item = TypeVar("Item")
Options = TypeVar("Options", bound=FormatOptions)


@dataclass(frozen=True)
class TaskFormat(Generic[Item, Options]):
    """One benchmark's format: its command line and how its items become tasks."""

    name: str
    help: str
    """`tasks import --help`'s line for it."""
    data_help: str
    """What its data files are (the DATA arguments)."""
    pdf_names: str
    """How its PDFs are named in --pdf-dir (`<source_document>.pdf`)."""
    options: type[Options]
    read: Callable[[Path], Sequence[Item]]
    """One data file's items, checked: the first problem an InputError naming file, line (or item) and field."""
    plan: Callable[[str, list[Item], Options], TaskPlan]
    """Every item of every data file -> the tasks of the domain named, and the collections they need."""
    data_metavar: str = "DATA"
    locate: Callable[[list[Item], dict[str, Path]], list[Item]] | None = None
    """The items with what only their PDFs say (stem -> the PDF found), before they are planned: the paper schema's
    chart boxes (findocmre_paper.py). None: nothing to read."""


def option(flag: str, help: str, metavar: str | None = None) -> dict[str, Any]:
    """A `FormatOptions` field's metadata: its flag (a bool is a switch), its help and its metavar."""
    return {"flag": flag, "help": help, "metavar": metavar}


def option_fields(options: type[FormatOptions]) -> list[dataclasses.Field[Any]]:
    return [spec for spec in dataclasses.fields(options) if "flag" in spec.metadata]  # type: ignore[arg-type]


def task_format(name: str) -> TaskFormat[Any, Any]:
    format_: TaskFormat[Any, Any] = importlib.import_module(FORMATS[name]).FORMAT
    return format_
