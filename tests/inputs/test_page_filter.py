"""`page_filter=figures` (FinDocMRE's Appendix C.4 as we read it): a text-only page and a decorative page (a logo, a
divider band) are not sent, a page that draws a figure is, and so is a page holding one of the task's own charts;
`none` sends every page. The rule is read from the collection's manifest (its kept figures), no PDF opened."""

from __future__ import annotations

import io
from pathlib import Path

import pymupdf
import pytest
from PIL import Image

from harness.cli.main import main
from harness.inputs.collections.manifest import manifest_path, read_manifest
from harness.inputs.page_filter import filtered_pages
from harness.inputs.page_images import document_pages
from harness.inputs.tasks import Task


def _png(width: int, height: int, colour: tuple[int, int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(out, format="PNG")
    return out.getvalue()


def _report(path: Path) -> None:
    """Page 1 text only; 2 a chart (a 400 x 300 px figure); 3 decorative (a 60 px logo, an 800 x 20 px band, a
    rule); 4 text only, where the task's own chart (a table drawn as text) is."""
    document = pymupdf.open()
    for number in range(1, 5):
        page = document.new_page(width=360, height=300)
        page.insert_text((36, 40), f"Page {number}: the year in review.", fontsize=11)
        if number == 2:
            page.insert_image(pymupdf.Rect(36, 60, 324, 276), stream=_png(400, 300, (200, 30, 30)))
        if number == 3:
            page.insert_image(pymupdf.Rect(36, 60, 66, 90), stream=_png(60, 60, (30, 30, 200)))
            page.insert_image(pymupdf.Rect(0, 280, 360, 290), stream=_png(800, 20, (30, 200, 30)))
            page.draw_line((36, 100), (324, 100))
    document.save(path)
    document.close()


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("page-filter")
    (folder / "reports").mkdir()
    _report(folder / "reports" / "annual.pdf")
    arguments = ["collection", "build", str(folder / "reports"), "--domain", "reports", "--out", str(folder / "c")]
    assert main([*arguments, "--workers", "1", "--page-images", "30"]) == 0
    return folder / "c"


def _task(chart_page: int | None = None) -> Task:
    charts = [{"id": "table1", "page": chart_page, "bbox": [36, 60, 200, 120]}] if chart_page else []
    metadata = {"charts": charts, "chart_ids": ["table1"] if charts else []}
    return Task("q1", "reports", "What?", "1", evidence=["reports_annual.md"], metadata=metadata)


def test_text_only_and_decorative_pages_are_filtered_out(collection: Path):
    [entry] = read_manifest(manifest_path(collection)).documents  # type: ignore[union-attr]
    assert sorted(image["page"] for image in entry.images if image["kind"] == "figure") == [2, 3, 3]  # all kept
    assert list(document_pages(_task(), collection, "full")[0].files) == [1, 2, 3, 4]
    assert list(document_pages(_task(), collection, "full", "none")[0].files) == [1, 2, 3, 4]
    assert list(document_pages(_task(), collection, "full", "figures")[0].files) == [2]


def test_a_page_holding_the_tasks_own_chart_is_kept(collection: Path):
    assert list(document_pages(_task(4), collection, "bbox", "figures")[0].files) == [2, 4]


def test_a_document_without_a_figure_is_sent_whole_rather_than_not_at_all():
    pages = {1: "d.images/page-001.png", 2: "d.images/page-002.png"}
    logo = [{"file": "d.images/figure-p001-1.png", "kind": "figure", "page": 1, "width": 60, "height": 60}]
    assert filtered_pages(pages, logo, "figures", set()) == pages
    chart = [{"file": "d.images/figure-p002-1.png", "kind": "figure", "page": 2, "width": 400, "height": 300}]
    assert filtered_pages(pages, logo + chart, "figures", set()) == {2: "d.images/page-002.png"}
