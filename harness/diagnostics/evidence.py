"""Which collection documents an episode touched, read from its logged commands and outputs (pure functions).

The method is an approximation: the host does not see the agent's file opens. A document is *named* when
a command contains its file name, *shown* when an output line carries its content under its name (a
grep/rg hit `name:...`, a `head`/`tail` header `==> name <==`), and *listed* when its name appears in an
output otherwise (`ls`, `find`, `grep -l`). A glob the shell expands (`cat /workspace/documents/*.md`, outside
quotes) *globs* the documents it matches, and an image the agent looked at (`view_image`) is *viewed*. Named,
globbed, shown and viewed documents count as reached; listed-only ones are recorded but do not count, or one `ls`
would reach every document. A name written inside a script counts as named even if the script never opens it.
Where the host saw the exact file opens (`--watch-opens`, harness/sandboxes/file_opens.py), only *opened* and
viewed documents count as reached. A document's page images and figures (`<stem>.images/`, `collection build
--page-images`) are its pictures: touching one, or naming the folder, touches the document the same way.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.records.events import ActionEvent, Event, ImageViewEvent, ObservationEvent, Touch

METHOD = "commands-and-output (approximation)"
_OPENS_METHOD = "inotify on the collection folder (exact opens)"
_REACHING = ("named", "globbed", "shown", "viewed")
"""The ways of touching a document that count as reaching it (evidence recall)."""
_TOKEN = re.compile(r"[\w.\-]+")
_SIMPLE_NAME = re.compile(r"[\w.\-]+")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_WORD_BREAK = re.compile(r"[|;&<>()=`$]")
"""What ends a word inside a shell word (redirections, substitutions, assignments)."""
_GLOB_CHARACTERS = frozenset("*?[")
_SEGMENT = re.compile(r"[|;&\n()`]+")
"""Where a command's simple commands part (pipes, lists, `$(...)` and backquoted substitutions, subshells):
each has its own first word."""
_ASSIGNMENT = re.compile(r"[A-Za-z_]\w*=\S*$")
_LISTING = frozenset({"ls", "find", "tree", "du", "stat", "file", "fd", "fdfind", "echo", "printf"})
"""Commands that take file names without reading the files."""
_IMAGES_SUFFIX = ".images"
"""The folder of a document's pictures (`documents_report.md` -> `documents_report.images/`): pdf_images.py."""
_COLLECTION_ROOT = "documents/"
"""Where the collection is in the sandbox (`/workspace/documents/`), for a path written from outside it."""


@dataclass
class _Touch:
    """One document an episode touched: the turn it was first touched, first reached, and every way."""

    document: str
    first_turn: int
    reached_turn: int | None = None
    how: set[str] = field(default_factory=set)

    def record(self) -> Touch:
        return Touch(
            document=self.document, first_turn=self.first_turn, reached_turn=self.reached_turn, how=sorted(self.how)
        )


@dataclass(frozen=True)
class _EvidenceRecord:
    """What the episode touched, and the task's evidence files it reached (with the first turn of each)."""

    touches: list[_Touch]
    evidence: list[str]
    method: str = METHOD

    @property
    def reached(self) -> list[str]:
        return [touch.document for touch in self.touches if touch.reached_turn is not None]

    @property
    def evidence_reached(self) -> dict[str, int]:
        """Evidence file -> the turn it was first reached, for the evidence files reached."""
        turns = {touch.document: touch.reached_turn for touch in self.touches}
        return {name: turn for name in self.evidence if (turn := turns.get(name)) is not None}

    @property
    def recall(self) -> float | None:
        """Evidence files reached / evidence files; None when the task lists none."""
        if not self.evidence:
            return None
        return len(self.evidence_reached) / len(set(self.evidence))

    def row_fields(self) -> dict[str, Any]:
        """The results-row fields (the per-document detail goes to the trajectory's `evidence` event)."""
        recall = self.recall
        return {
            "evidence_recall": None if recall is None else round(recall, 6),
            "evidence_reached": self.evidence_reached,
            "files_touched": len(self.reached),
            "evidence_method": self.method,
        }


class DocumentIndex:
    """A collection's documents by file name, so a text is matched against all of them in one pass."""

    def __init__(self, documents: Iterable[str]):
        self.documents = sorted(set(documents))
        self._by_name: dict[str, list[str]] = {}
        self._odd_names: list[tuple[str, str]] = []  # names a token cannot hold (spaces...): substring search
        self._by_pictures: dict[str, str] = {}
        """A pictures folder (`report.images`, relative to the collection) -> its document (`report.md`)."""
        for document in self.documents:
            name = document.rsplit("/", 1)[-1]
            if _SIMPLE_NAME.fullmatch(name):
                self._by_name.setdefault(name, []).append(document)
            else:
                self._odd_names.append((name, document))
            if "." in name and not document.rsplit("/", 1)[0].endswith(_IMAGES_SUFFIX):
                self._by_pictures[document.rsplit(".", 1)[0] + _IMAGES_SUFFIX] = document
        for folder, document in self._by_pictures.items():  # named as a token: `ls documents/report.images`
            self._by_name.setdefault(folder.rsplit("/", 1)[-1], []).append(document)

    @classmethod
    def of_folder(cls, folder: Path, extra: Iterable[str] = ()) -> DocumentIndex:
        return cls([*_files(folder, folder.stat().st_mtime_ns), *extra])

    def named_in(self, text: str) -> list[str]:
        """Documents whose file name occurs in the text as a whole word (paths and quotes around it allowed)."""
        found = [doc for token in set(_TOKEN.findall(text)) for doc in self._by_name.get(token, [])]
        found += [doc for name, doc in self._odd_names if name in text]
        return sorted(set(found))

    def globbed_in(self, command: str) -> list[str]:
        """Documents an unquoted glob of the command matches, as the shell would expand it over the collection (a
        `*` never crosses a `/`): `/workspace/documents/*.md`, `documents/*.csv` from /workspace, `*.md` inside. A
        glob given to a command that only lists files (`ls *.md`, `wc -l *`) reads none of them."""
        found: set[str] = set()
        for segment in _SEGMENT.split(_QUOTED.sub(" ", command)):
            words = [word for word in segment.split() if not _ASSIGNMENT.match(word)]
            if not words or words[0] in _LISTING or words[:2] == ["wc", "-l"]:
                continue
            for word in _glob_words(segment):
                found.update(self._matching(word))
        return sorted(found)

    def _matching(self, word: str) -> list[str]:
        pattern = word.rsplit(_COLLECTION_ROOT, 1)[-1] if _COLLECTION_ROOT in word else word.removeprefix("./")
        if pattern.startswith("/"):
            return []  # a glob over another folder
        parts = pattern.split("/")
        return [
            document
            for document in self.documents
            if len(names := document.split("/")) == len(parts)
            and all(fnmatch.fnmatchcase(name, part) for name, part in zip(names, parts, strict=True))
        ]

    def at_path(self, path: str) -> list[str]:
        """The document a sandbox path is (`/workspace/documents/report.images/page-002.png`), if it is one."""
        relative = path.rsplit(_COLLECTION_ROOT, 1)[-1] if _COLLECTION_ROOT in path else path.removeprefix("./")
        return [relative] if relative in self.documents else self.named_in(path)

    def owner(self, document: str) -> str | None:
        """The document whose pictures folder holds DOCUMENT (a page image or figure); None for any other file."""
        folder = document.rsplit("/", 1)[0] if "/" in document else ""
        return self._by_pictures.get(folder) if folder.endswith(_IMAGES_SUFFIX) else None


def _glob_words(segment: str) -> list[str]:
    """The words of SEGMENT holding a glob character, which the shell expands (quoted ones are left out first); in
    one pass over the text, however long a word an agent writes."""
    return [
        word
        for chunk in segment.split()
        if not _GLOB_CHARACTERS.isdisjoint(chunk)
        for word in _WORD_BREAK.split(chunk)
        if not _GLOB_CHARACTERS.isdisjoint(word)
    ]


@functools.lru_cache(maxsize=64)
def _files(folder: Path, mtime_ns: int) -> tuple[str, ...]:
    """A collection's files, listed once while its folder is unchanged (adding or removing a file changes
    the folder's mtime; collections are flat folders)."""
    return tuple(str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file())


def shown_under(line: str, document: str) -> bool:
    """An output line carrying the document's content under its name (grep/rg hit or head/tail header)."""
    name = re.escape(document.rsplit("/", 1)[-1])
    return re.match(rf"(?:==> )?(?:\S*/)?{name}(?::| <==|-\d+-)", line) is not None


def touched_documents(
    events: Iterable[Event], index: DocumentIndex, evidence: list[str], opens: dict[str, int] | None = None
) -> _EvidenceRecord:
    """Every document the logged commands named or the outputs showed or listed, in order of first touch.

    With `opens` (file -> first turn it was opened, seen by the host: harness/sandboxes/file_opens.py) only opened
    documents are reached, and the record names that method.
    """
    touches: dict[str, _Touch] = {}
    reaching = ("opened", "viewed") if opens is not None else _REACHING

    def touch(document: str, turn: int, how: str) -> None:
        record = touches.setdefault(document, _Touch(document, turn))
        record.first_turn = min(record.first_turn, turn)
        record.how.add(how)
        if how in reaching and (record.reached_turn is None or turn < record.reached_turn):
            record.reached_turn = turn
        owner = index.owner(document)
        # a picture of a document is the document, seen; a picture named only by its file name (`page-002.png`,
        # every document's) is not: naming the folder (`report.images/...`) names the document
        if owner is not None and how != "named":
            touch(owner, turn, how)

    for event in events:
        if isinstance(event, ActionEvent):
            for document in index.named_in(event.command):
                touch(document, event.turn, "named")
            for document in index.globbed_in(event.command):
                touch(document, event.turn, "globbed")
        elif isinstance(event, ImageViewEvent) and event.image is not None:
            for document in index.at_path(event.path):
                touch(document, event.turn, "viewed")
        elif isinstance(event, ObservationEvent):
            for line in (event.stdout or "").splitlines():
                for document in index.named_in(line):
                    touch(document, event.turn, "shown" if shown_under(line, document) else "listed")
    for document, turn in (opens or {}).items():
        touch(document, turn, "opened")
    ordered = sorted(touches.values(), key=lambda record: record.first_turn)  # stable: log order within a turn
    method = _OPENS_METHOD if opens is not None else METHOD
    return _EvidenceRecord(ordered, list(dict.fromkeys(evidence)), method)
