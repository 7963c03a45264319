"""FinDocMRE items to tasks, one collection per source document (docs/guide/findocmre.md).

The public release's files could not be found (no repository or dataset card holds them), so the item format
follows the paper's description with its names in snake case: `id`, `question`, `options`, `answer`,
`question_type` (one of `QUESTION_TYPES`), `financial_domain`, `reasoning_type`, `chart_ids`, `language`,
`source_document` (the PDF's file stem), and `charts` (each chart's page and box, for the paper's `cropped` and
`bbox` protocols). Pure planning: read and check the items and name the tasks; building the collections and
writing files is the import engine's job (engine.py).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from harness.core.errors import InputError, read_text_input
from harness.core.names import check_task_id
from harness.grading import GRADERS, GoldAnswerError, GoldSpec
from harness.inputs.collections.pdf_images import MAX_DPI
from harness.inputs.collections.pdf_probes import page_counts
from harness.inputs.importers.formats import CollectionSettings, TaskFormat, option
from harness.inputs.importers.rows import CollectionPlan, TaskPlan, TaskRow, document_files
from harness.inputs.profiles import load_profile

__all__ = [
    "DEFAULT_DPI",
    "FORMAT",
    "QUESTION_TYPES",
    "Chart",
    "FinDocItem",
    "chart_size",
    "check_item",
    "collection_name",
    "count_pages",
    "document_file",
    "plan_import",
    "read_items",
    "read_json_items",
    "task_row",
]

QUESTION_TYPES = {
    "single_choice": "choice",
    "multiple_choice": "multi_choice",
    "numeric_exact": "numeric",
    "numeric_approx": "numeric_tol",
    "open_ended": "score",
}
"""FinDocMRE's five answer types -> the grader of each (the open-ended answers scored 0-5 by a judge panel)."""
APPROX_REL_TOL = 0.05
"""The paper's tolerance for approximate numeric answers: within 5%."""
LANGUAGES = ("en", "zh")
_LANGUAGE_NAMES = {"en": "en", "english": "en", "zh": "zh", "chinese": "zh", "zh-cn": "zh", "中文": "zh"}
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_REQUIRED_TEXT = ("question", "financial_domain", "reasoning_type")


@dataclass(frozen=True)
class Chart:
    id: str
    page: int
    """1-based page of the source PDF."""
    bbox: tuple[float, float, float, float]
    """x0, y0, x1, y1 in PDF points from the page's top left (pymupdf's coordinates)."""


@dataclass(frozen=True)
class FinDocItem:
    where: str
    """`file:line` (JSON Lines) or `file: item N` (a JSON list): how errors name the item."""
    id: str
    question: str
    options: dict[str, str]
    answer: str
    question_type: str
    financial_domain: str
    reasoning_type: str
    chart_ids: tuple[str, ...]
    language: str
    source_document: str
    charts: tuple[Chart, ...]
    reasoning_trace: tuple[str, ...] = ()
    """The paper's step-by-step derivation of the answer (its Table 7 schema), kept in the task's metadata."""
    pages: int | None = None
    """The source PDF's page count (its Figure 6 plots accuracy against it); None until the PDF is read."""


PAGE_RANGES = ((1, 10), (11, 20), (21, 50), (51, 100))
"""The report's page-count groups (the paper's Figure 6): these ranges, then `101+`."""


def page_range(pages: int) -> str:
    """The page-count group of a document of PAGES pages: `1-10`, `11-20`, `21-50`, `51-100` or `101+`."""
    return next((f"{low}-{high}" for low, high in PAGE_RANGES if pages <= high), f"{PAGE_RANGES[-1][1] + 1}+")


def count_pages(items: list[FinDocItem], pdfs: dict[str, Path]) -> list[FinDocItem]:
    """ITEMS with their PDF's page count (each PDF read once, in a bounded process); an item whose PDF is missing
    or unreadable has none."""
    stems = sorted({item.source_document for item in items} & set(pdfs))
    counted = page_counts([pdfs[stem] for stem in stems])
    counts = {stem: counted[pdfs[stem]] for stem in stems}
    return [dataclasses.replace(item, pages=counts.get(item.source_document)) for item in items]


def chart_size(count: int) -> str:
    """The paper's S/M/L: a question needing one chart, two, or three and more."""
    return "S" if count <= 1 else "M" if count == 2 else "L"


def read_items(path: Path) -> list[FinDocItem]:
    """Every item of a `.jsonl` file (one per line) or a `.json` list, checked: the first problem is an
    `InputError` naming file, line (or item) and field."""
    return [check_item(where, raw) for where, raw in read_json_items(path)]


def read_json_items(path: Path) -> list[tuple[str, Any]]:
    """Each raw item of a `.jsonl` file or a `.json` list, with where it is (`file:line`, `file: item N`)."""
    text = read_text_input(path, "data")
    if path.suffix.lower() == ".jsonl":
        raws = [(f"{path}:{number}", _json(line, f"{path}:{number}")) for number, line in _lines(text)]
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise InputError(f"{path}:{error.lineno}: malformed JSON: {error.msg}") from None
        if not isinstance(data, list):
            raise InputError(f"{path}: FinDocMRE data is a JSON list of items (or JSON Lines in a .jsonl file)")
        raws = [(f"{path}: item {number}", raw) for number, raw in enumerate(data, start=1)]
    return raws


def _lines(text: str) -> list[tuple[int, str]]:
    return [(number, line) for number, line in enumerate(text.splitlines(), start=1) if line.strip()]


def _json(line: str, where: str) -> Any:
    try:
        return json.loads(line)
    except json.JSONDecodeError as error:
        raise InputError(f"{where}: malformed JSON: {error.msg} (column {error.colno})") from None


def check_item(where: str, raw: Any) -> FinDocItem:
    if not isinstance(raw, dict):
        raise InputError(f"{where}: an item must be a JSON object")
    item_id = _scalar(raw, "id", where)
    check_task_id(item_id, where)
    for name in _REQUIRED_TEXT:
        _text(raw, name, where)
    question_type = raw.get("question_type")
    if question_type not in QUESTION_TYPES:
        raise InputError(f"{where}: field 'question_type': {question_type!r} is not one of {', '.join(QUESTION_TYPES)}")
    language = _LANGUAGE_NAMES.get(str(raw.get("language")).strip().lower(), raw.get("language"))
    if language not in LANGUAGES:
        raise InputError(f"{where}: field 'language': {language!r} is not one of {', '.join(LANGUAGES)}")
    source = _text(raw, "source_document", where)
    if "/" in source or "\\" in source or source.startswith("."):
        raise InputError(f"{where}: field 'source_document': must be a PDF's file stem (no '/', no leading '.')")
    chart_ids = raw.get("chart_ids")
    if not isinstance(chart_ids, list) or not chart_ids or not all(_is_id(c) for c in chart_ids):
        raise InputError(f"{where}: field 'chart_ids': must be a non-empty list of chart ids")
    ids = tuple(str(c).strip() for c in chart_ids)
    if len(set(ids)) != len(ids):
        raise InputError(f"{where}: field 'chart_ids': a chart is listed twice")
    options = _options(raw.get("options"), question_type, where)
    answer = _answer(raw.get("answer"), question_type, options, where)
    charts = _charts(raw.get("charts"), ids, where)
    return FinDocItem(
        where,
        item_id,
        raw["question"].strip(),
        options,
        answer,
        question_type,
        raw["financial_domain"].strip(),
        raw["reasoning_type"].strip(),
        ids,
        language,
        source,
        charts,
    )


def _is_id(value: Any) -> bool:
    return (isinstance(value, str) and bool(value.strip())) or (isinstance(value, int) and not isinstance(value, bool))


def _scalar(raw: dict[str, Any], name: str, where: str) -> str:
    if not _is_id(raw.get(name)):
        raise InputError(f"{where}: field '{name}': must be a non-empty string or an integer")
    return str(raw[name]).strip()


def _text(raw: dict[str, Any], name: str, where: str) -> str:
    if not isinstance(raw.get(name), str) or not raw[name].strip():
        raise InputError(f"{where}: field '{name}': must be a non-empty string")
    return str(raw[name]).strip()


def _options(raw: Any, question_type: str, where: str) -> dict[str, str]:
    """Letter -> text, from an object keyed by letters or a list (lettered A, B, ... in order)."""
    choice = question_type in ("single_choice", "multiple_choice")
    if raw is None or raw == [] or raw == {}:
        if choice:
            raise InputError(f"{where}: field 'options': a {question_type} question needs its options")
        return {}
    if isinstance(raw, list):
        if len(raw) > len(_LETTERS):
            raise InputError(f"{where}: field 'options': more than {len(_LETTERS)} options")
        raw = dict(zip(_LETTERS, raw, strict=False))
    if not isinstance(raw, dict):
        raise InputError(f"{where}: field 'options': must be a list or an object of letter -> text")
    letters = list(raw)
    if letters != list(_LETTERS[: len(letters)]):
        raise InputError(f"{where}: field 'options': the letters must be A, B, C, ... in order")
    for letter, text in raw.items():
        if not isinstance(text, (str, int, float)) or isinstance(text, bool) or not str(text).strip():
            raise InputError(f"{where}: field 'options': option {letter} must be a non-empty string")
    return {letter: str(text).strip() for letter, text in raw.items()}


def _answer(raw: Any, question_type: str, options: dict[str, str], where: str) -> str:
    if question_type == "multiple_choice" and isinstance(raw, list):
        if not all(isinstance(letter, str) for letter in raw):
            raise InputError(f"{where}: field 'answer': must be option letters")
        raw = ", ".join(sorted(letter.strip().upper() for letter in raw))
    elif question_type == "multiple_choice" and isinstance(raw, str):
        pieces = [piece for piece in re.split(r"[\s,;&、，；]+", raw.strip().upper()) if piece]
        letters_only = all(re.fullmatch(r"[A-Z]", p) or set(p) <= set(options) for p in pieces)  # "AC", not "AND"
        if not pieces or not letters_only:
            raise InputError(f"{where}: field 'answer': {raw!r} is not option letters (e.g. 'A, C' or 'AC')")
        raw = ", ".join(sorted({letter for piece in pieces for letter in piece}))
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        if not math.isfinite(raw):
            raise InputError(f"{where}: field 'answer': {raw!r} is not a finite number")
        raw = repr(raw) if isinstance(raw, float) else str(raw)
    if not isinstance(raw, str) or not raw.strip():
        raise InputError(f"{where}: field 'answer': must be a non-empty string")
    answer = raw.strip()
    try:
        GRADERS[grader_of(question_type, answer)].validate(_gold(answer, question_type, options))
    except GoldAnswerError as error:
        raise InputError(f"{where}: field 'answer': {error}") from None
    if question_type == "single_choice" and answer.upper() not in options:
        raise InputError(f"{where}: field 'answer': {answer!r} is not one of the options {', '.join(options)}")
    return answer.upper() if question_type == "single_choice" else answer


def _answer_format(question_type: str, options: dict[str, str]) -> str | None:
    if not options:
        return None
    span = f"{next(iter(options))}-{list(options)[-1]}"
    if question_type == "single_choice":
        return f"one option letter ({span})"
    if question_type == "multiple_choice":
        return f"every correct option letter ({span}), e.g. A, C"
    return None


def grader_of(question_type: str, answer: str) -> str:
    """The type's grader, except that an approximate gold of 0 is graded exactly (`numeric`): a relative
    tolerance around 0 is empty, and the paper counts only 0 right there (Appendix B.1.2)."""
    if question_type == "numeric_approx" and _is_zero(answer):
        return "numeric"
    return QUESTION_TYPES[question_type]


def _is_zero(answer: str) -> bool:
    try:
        return Decimal(answer) == 0
    except InvalidOperation:
        return False


def _gold(answer: str, question_type: str, options: dict[str, str]) -> GoldSpec:
    rel_tol = APPROX_REL_TOL if question_type == "numeric_approx" else None
    return GoldSpec(answer, _answer_format(question_type, options), rel_tol)


MAX_PAGE_POINTS = 14_400
"""The largest side a PDF page can have, in points (ISO 32000-1, Annex C.2: 200 inches); a chart's box lies
inside its page (checked against the page itself when its image is read: page_images.py)."""


def _charts(raw: Any, ids: tuple[str, ...], where: str) -> tuple[Chart, ...]:
    """Optional: where each of the item's charts is (needed by the `cropped` and `bbox` protocols only)."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise InputError(f"{where}: field 'charts': must be a list of {{id, page, bbox}}")
    charts = []
    for index, entry in enumerate(raw):
        field = f"{where}: field 'charts[{index}]'"
        if not isinstance(entry, dict) or not _is_id(entry.get("id")):
            raise InputError(f"{field}: must be an object with an 'id'")
        page = entry.get("page")
        if not isinstance(page, int) or isinstance(page, bool) or page < 1:
            raise InputError(f"{field}: field 'page': must be a page number (1, 2, ...)")
        box = entry.get("bbox")
        if not isinstance(box, list) or len(box) != 4 or not all(_finite(v) for v in box):
            box = [0, 0, 0, 0]
        if not (box[0] < box[2] and box[1] < box[3] and min(box) >= 0 and max(box) <= MAX_PAGE_POINTS):
            raise InputError(
                f"{field}: field 'bbox': must be [x0, y0, x1, y1] in points on a page, "
                f"0 <= x0 < x1 <= {MAX_PAGE_POINTS:,}, 0 <= y0 < y1 <= {MAX_PAGE_POINTS:,}"
            )
        charts.append(Chart(str(entry["id"]).strip(), page, (box[0], box[1], box[2], box[3])))
    located = {chart.id for chart in charts}
    unlocated = [chart_id for chart_id in ids if chart_id not in located]
    if unlocated:
        raise InputError(f"{where}: field 'charts': chart {unlocated[0]!r} of chart_ids has no page and box")
    return tuple(chart for chart in charts if chart.id in ids)


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def document_file(source_document: str) -> str:
    """The converted file's name in its collection, as the collection builder names it."""
    return document_files([source_document])[source_document]


def collection_name(domain: str, source_document: str) -> str:
    """`<domain>-<stem>-<hash>`: readable, and unique by the document whatever its stem holds."""
    stem = re.sub(r"[^A-Za-z0-9_-]+", "_", source_document)[:40].strip("_-") or "doc"
    digest = hashlib.sha256(source_document.encode()).hexdigest()[:8]
    return f"{domain[:30]}-{stem}-{digest}"


def _asked(item: FinDocItem) -> str:
    """The question as the model reads it: the options listed under it, one per line."""
    if not item.options:
        return item.question
    heading = "选项：" if item.language == "zh" else "Options:"
    return "\n".join([item.question, "", heading, *(f"{letter}. {text}" for letter, text in item.options.items())])


def task_row(domain: str, item: FinDocItem) -> TaskRow:
    """One task line; the report groups by financial domain, language and chart count (`groups`)."""
    gold = _gold(item.answer, item.question_type, item.options)
    return TaskRow(
        id=item.id,
        domain=domain,
        question=_asked(item),
        answer=item.answer,
        grader=grader_of(item.question_type, item.answer),
        type=item.question_type,
        collection=collection_name(domain, item.source_document),
        evidence=[document_file(item.source_document)],
        groups={
            "financial domain": item.financial_domain,
            "reasoning type": item.reasoning_type,
            "language": item.language,
            "charts": chart_size(len(item.chart_ids)),
            **({"pages": page_range(item.pages)} if item.pages else {}),
        },
        metadata={
            "source": "findocmre",
            "reasoning_type": item.reasoning_type,
            "source_document": item.source_document,
            "chart_ids": list(item.chart_ids),
            "charts": [{"id": c.id, "page": c.page, "bbox": list(c.bbox)} for c in item.charts],
            **({"reasoning_trace": list(item.reasoning_trace)} if item.reasoning_trace else {}),
            **({"pages": item.pages} if item.pages else {}),
        },
        answer_format=gold.answer_format or None,
        rel_tol=gold.rel_tol or None,
    )


def plan_import(domain: str, items: list[FinDocItem], options: FinDocOptions | None = None) -> TaskPlan:
    """A task per item (ids unique over every data file), one collection per source document."""
    seen: dict[str, str] = {}
    for item in items:
        if item.id in seen:
            raise InputError(f"{item.where}: field 'id': duplicate id {item.id!r} (first at {seen[item.id]})")
        seen[item.id] = item.where
    documents = sorted({item.source_document for item in items})
    collections = {collection_name(domain, stem): CollectionPlan((stem,)) for stem in documents}
    return TaskPlan([task_row(domain, item) for item in items], collections)


def _profile_dpi() -> int:
    """The findocmre profile's `page_images`: the paper's resolution (110 dpi, Appendix C.3)."""
    dpi = load_profile("findocmre").page_images
    if dpi is None:
        raise RuntimeError("the findocmre profile names no page_images")
    return dpi


DEFAULT_DPI = _profile_dpi()
"""The resolution the import keeps pages at unless `--page-images` says another."""


@dataclass(frozen=True)
class FinDocOptions:
    page_images: int = field(
        default=DEFAULT_DPI,
        metadata=option(
            "--page-images",
            f"the resolution the pages are kept at (default: {DEFAULT_DPI}, the findocmre profile's, as the paper)",
            "DPI",
        ),
    )

    def check(self) -> None:
        if not 0 < self.page_images <= MAX_DPI:  # said before the items are read, not at the first build
            raise InputError(f"--page-images: {self.page_images} dpi is not between 1 and {MAX_DPI}")

    def collection_settings(self) -> CollectionSettings:
        return CollectionSettings(page_images=self.page_images)

    def describe(self) -> str:
        return f"pages at {self.page_images} dpi"


FORMAT = TaskFormat(
    name="findocmre",
    help="FinDocMRE items (JSON Lines or a JSON list) and their PDFs: five answer types, one collection per "
    "source document with its pages kept as images",
    data_help="FinDocMRE item files (.jsonl or .json)",
    pdf_names="<source_document>.pdf",
    options=FinDocOptions,
    read=read_items,
    plan=plan_import,
    locate=count_pages,
)
