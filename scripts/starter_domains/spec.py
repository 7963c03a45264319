"""What a starter domain is made of: table documents cut from data sets (`Split`, `Table`), files copied as
they are (`Copy`), and tasks whose figures are references into the documents (`Task`, `Ref`, `Text`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .reader import num

if TYPE_CHECKING:
    from .sources import Debs

COMMA_LANGS = {"de", "fr", "es", "nl"}
Column = tuple[Any, str, int]  # (data column, header, decimals; -1 for text)


@dataclass(frozen=True)
class Document:
    """Where a table document ends up: the converted file's name, and whether its figures use a decimal comma."""

    name: str
    comma: bool

    @classmethod
    def of(cls, source: str, stem: str, lang: str) -> Document:
        return cls(f"{source}_{stem}.md", lang in COMMA_LANGS)  # the collection builder's `<source>_<title>.md`


@dataclass
class Table:
    """One table document: `rows` hold the figures as printed; the first column is the row key."""

    source: str
    stem: str
    fmt: str  # csv, xlsx, html, md
    title: str
    intro: str
    header: list[str]
    rows: list[list[str]]
    lang: str = "en"

    @property
    def document(self) -> Document:
        return Document.of(self.source, self.stem, self.lang)

    @property
    def name(self) -> str:
        return self.document.name

    @property
    def comma(self) -> bool:
        return self.document.comma

    def value(self, key: str, col: str) -> Decimal:
        j = self.header.index(col)
        if any(row[0].startswith(f"{key} #") for row in self.rows):
            raise KeyError(f"{self.name}: {key!r} names several rows; a task must not depend on their order")
        if key == "*":
            return sum((num(row[j], self.comma) for row in self.rows), Decimal(0))
        matches = [row for row in self.rows if row[0] == key]
        if len(matches) != 1:
            raise KeyError(f"{self.name}: {len(matches)} rows with key {key!r}")
        return num(matches[0][j], self.comma)


@dataclass(frozen=True)
class Split:
    """A data set cut into one table document per value of its `by` column, rows keyed by `key` and sorted by it.

    The document of group g has the id `<id>/<g>`. `load` gives the data (a DataFrame); `columns` may depend on
    it; `kind` is the raw format (csv, xlsx, html, md) or a function of the document's index."""

    id: str
    load: Callable[[], Any]
    by: str
    groups: Sequence[Any]
    key: str
    columns: Sequence[Column] | Callable[[Any], Sequence[Column]]
    source: str
    stem: Callable[[Any], str]
    kind: str | Callable[[int], str]
    title: Callable[[Any], str]
    intro: str
    key_label: str
    lang: str = "en"

    def documents(self) -> dict[str, Document]:
        """The documents' ids and names, without loading the data."""
        return {f"{self.id}/{group}": Document.of(self.source, self.stem(group), self.lang) for group in self.groups}


@dataclass(frozen=True)
class Copy:
    """A file of the raw archive written as it is: a file's bytes, or a text (written as Markdown)."""

    source: str
    name: str
    content: Path | str


@dataclass(frozen=True)
class Ref:
    """A figure of a table document: the cell of row `key` (`*`: the column's sum) and column `col`."""

    doc: str  # a document id, `<split id>/<group>`
    key: str
    col: str


@dataclass(frozen=True)
class Text:
    """A figure in running text (a converted PDF): the first group of `pattern`, expected to read `printed`."""

    name: str  # the converted file's name
    pattern: str
    printed: str


@dataclass(frozen=True)
class Task:
    """One row of a domain's task table (domains/<name>.yaml). `expr` is over v[0], v[1], ... (Decimals, in the order
    of `refs`)."""

    id: str
    question: str
    expr: str
    answer_format: str
    refs: list[Ref | Text]


@dataclass(frozen=True)
class Domain:
    name: str
    splits: list[Split]
    copies: Callable[[Debs], list[Copy]]
    tasks: list[Task]

    def documents(self) -> dict[str, Document]:
        """Every table document of the domain by id."""
        out: dict[str, Document] = {}
        for split in self.splits:
            for doc_id, document in split.documents().items():
                if doc_id in out:
                    raise ValueError(f"{self.name}: two documents with id {doc_id!r}")
                out[doc_id] = document
        return out
