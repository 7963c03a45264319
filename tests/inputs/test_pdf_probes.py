"""What a task import reads of a PDF before its build (page counts, embedded figures) runs in a bounded process:
a PDF that goes over the cap, or that pymupdf cannot read, is read as unreadable and the import goes on; a page
the PDF lacks is said, not raised from a worker."""

from __future__ import annotations

from pathlib import Path

import pymupdf

from harness.core.bounded import Limits
from harness.inputs.collections.pdf_probes import Missing, embedded_image_boxes, page_counts


def three_pages(path: Path) -> Path:
    document = pymupdf.open()
    for _ in range(3):
        document.new_page()
    document.save(path)
    return path


def test_page_counts_are_read_in_a_bounded_process_and_one_past_its_cap_is_unreadable(tmp_path):
    pdf, garbage = three_pages(tmp_path / "a.pdf"), tmp_path / "b.pdf"
    garbage.write_bytes(b"%PDF-1.7\n" + b"\x00" * 100)
    assert page_counts([pdf, garbage]) == {pdf: 3, garbage: None}
    # a cap no process can keep (its start alone takes longer) stands for a PDF that hangs pymupdf: unreadable
    assert page_counts([pdf], Limits(memory_mb=2048, seconds=0.001)) == {pdf: None}


def test_a_page_or_image_the_pdf_lacks_is_missing_with_its_reason(tmp_path):
    pdf = three_pages(tmp_path / "a.pdf")
    boxes = embedded_image_boxes([(pdf, 9, 1), (pdf, 2, 1)])
    assert boxes == {
        (pdf, 9, 1): Missing("a.pdf has no page 9 (it has 3)"),
        (pdf, 2, 1): Missing("page 2 of a.pdf has 0 images"),
    }
