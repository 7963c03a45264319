"""FinDocMRE items in its paper's own schema (Table 7), imported as written: `question_id`, `source_chart_ids`,
`question_format` (`numerical_precise`, `numerical_approximate`, ...), `reasoning_type`, `domain`,
`question_content: {stem, options}`, `answer`, `reasoning_trace` (docs/guide/findocmre.md §1).

The paper generates a document's items together, and Table 7 names no document: a data file holds one document's
items and is named after its PDF (`<stem>.json`), unless an item says `source_document`. Nor does it name a
language: an item's `language`, else `zh` when its stem holds a CJK ideograph, else `en`. Each item is checked as
the renamed schema's (findocmre.py), its errors naming the paper's fields. A chart id that names an embedded image
(`page_6_image_1.png`: page 6's first image, as PyMuPDF lists them) is located in the PDF, its page and box read
with pymupdf, so no box is needed where the document has the figure.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

from harness.core.errors import InputError
from harness.inputs.collections.pdf_probes import Missing, embedded_image_boxes
from harness.inputs.importers.findocmre import (
    Chart,
    FinDocItem,
    FinDocOptions,
    check_item,
    count_pages,
    plan_import,
    read_json_items,
)
from harness.inputs.importers.formats import TaskFormat

__all__ = ["FORMAT", "locate_charts", "read_paper_items"]

QUESTION_FORMATS = {
    "single_choice": "single_choice",
    "multiple_choice": "multiple_choice",
    "numerical_precise": "numeric_exact",
    "numerical_approximate": "numeric_approx",
    "open_ended": "open_ended",
}
"""The paper's `question_format` -> the task type (findocmre.py's `question_type`)."""
_FIELDS = {
    "id": "question_id",
    "question": "question_content.stem",
    "options": "question_content.options",
    "question_type": "question_format",
    "financial_domain": "domain",
    "chart_ids": "source_chart_ids",
}
"""The renamed schema's field -> the paper's, for error messages."""
_EMBEDDED = re.compile(r"page_(\d+)_image_(\d+)\.[A-Za-z0-9]+")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def read_paper_items(path: Path) -> list[FinDocItem]:
    """Every item of one document's file (a JSON list, or JSON Lines in a `.jsonl` file), checked."""
    return [_item(where, raw, path.stem) for where, raw in read_json_items(path)]


def _item(where: str, raw: Any, stem: str) -> FinDocItem:
    if not isinstance(raw, dict):
        raise InputError(f"{where}: an item must be a JSON object")
    question_format = raw.get("question_format")
    if question_format not in QUESTION_FORMATS:
        raise InputError(
            f"{where}: field 'question_format': {question_format!r} is not one of {', '.join(QUESTION_FORMATS)}"
        )
    content = raw.get("question_content")
    if not isinstance(content, dict):
        raise InputError(f"{where}: field 'question_content': must be an object {{stem, options}}")
    trace = raw.get("reasoning_trace", [])
    if isinstance(trace, str):
        trace = [trace]
    if not isinstance(trace, list) or not all(isinstance(step, str) for step in trace):
        raise InputError(f"{where}: field 'reasoning_trace': must be a list of strings")
    stem_text = content.get("stem")
    language = raw.get("language") or ("zh" if isinstance(stem_text, str) and _CJK.search(stem_text) else "en")
    renamed = {
        "id": raw.get("question_id"),
        "question": stem_text,
        "options": content.get("options"),
        "answer": raw.get("answer"),
        "question_type": QUESTION_FORMATS[question_format],
        "financial_domain": raw.get("domain"),
        "reasoning_type": raw.get("reasoning_type"),
        "chart_ids": raw.get("source_chart_ids"),
        "language": language,
        "source_document": raw.get("source_document", stem),
        "charts": raw.get("charts"),
    }
    try:
        item = check_item(where, renamed)
    except InputError as error:
        message = str(error)
        for ours, theirs in _FIELDS.items():
            message = message.replace(f"field '{ours}'", f"field '{theirs}'")
        raise InputError(message) from None
    return dataclasses.replace(item, reasoning_trace=tuple(trace))


def locate_charts(items: list[FinDocItem], pdfs: dict[str, Path]) -> list[FinDocItem]:
    """ITEMS with each chart id that names an embedded image given its page and box from the PDF, and the PDF's page
    count (items whose PDF is missing are left as they are: the import skips them). A page or image the PDF lacks is
    an InputError."""
    wanted: dict[tuple[str, str], str] = {}  # (document, chart id) -> where the first item naming it is
    for item in items:
        known = {chart.id for chart in item.charts}
        if item.source_document in pdfs:
            for chart_id in item.chart_ids:
                if chart_id not in known and _EMBEDDED.fullmatch(chart_id):
                    wanted.setdefault((item.source_document, chart_id), item.where)
    located = _embedded(wanted, pdfs)
    result = []
    for item in items:
        found = {chart.id: chart for chart in item.charts}
        found |= {c: located[(item.source_document, c)] for c in item.chart_ids if (item.source_document, c) in located}
        charts = tuple(found[c] for c in item.chart_ids if c in found)
        result.append(dataclasses.replace(item, charts=charts))
    return count_pages(result, pdfs)


def _embedded(wanted: dict[tuple[str, str], str], pdfs: dict[str, Path]) -> dict[tuple[str, str], Chart]:
    """Each wanted chart `page_N_image_K.*`: page N's K-th embedded image and its box (pdf_images.py), read in a
    bounded process (pdf_probes.py); left out where pymupdf cannot read the PDF (the build then says why it is not
    used). A page or an image the PDF lacks is an InputError naming the first item that asks for it."""
    asked = []
    for (document, chart_id), where in wanted.items():
        match = _EMBEDDED.fullmatch(chart_id)
        assert match is not None
        asked.append(((pdfs[document], int(match.group(1)), int(match.group(2))), document, chart_id, where))
    boxes = embedded_image_boxes(list(dict.fromkeys(request for request, *_ in asked)))
    located = {}
    for request, document, chart_id, where in asked:  # in the items' order: the first problem is the one named
        box = boxes[request]
        if isinstance(box, Missing):
            raise InputError(f"{where}: field 'source_chart_ids': {chart_id!r}: {box.problem}")
        if box is not None:
            located[(document, chart_id)] = Chart(chart_id, request[1], box)
    return located


FORMAT = TaskFormat(
    name="findocmre-paper",
    help="FinDocMRE items in the paper's own schema (its Table 7), one file per document named after its PDF; "
    "chart ids naming embedded images (page_6_image_1.png) located in the PDF",
    data_help="FinDocMRE item files in the paper's schema, <document stem>.json (a JSON list) or .jsonl",
    pdf_names="<data file stem>.pdf",
    options=FinDocOptions,
    read=read_paper_items,
    plan=plan_import,
    locate=locate_charts,
)
