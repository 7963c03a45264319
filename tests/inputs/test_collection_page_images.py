"""`collection build --page-images DPI`: a PDF's pages and figures kept beside its Markdown and listed in the
manifest; a rebuild keeps them (without the flag too) and drops them when asked to (`--no-page-images`)."""

from __future__ import annotations

import shutil
from pathlib import Path

from harness.cli.main import main
from harness.inputs.collections.manifest import manifest_path, read_manifest


def _build(source: Path, out: Path, *extra: str) -> int:
    return main(
        ["collection", "build", str(source), "--domain", "reports", "--out", str(out), "--workers", "1", *extra]
    )


def test_pages_and_figures_are_kept_listed_and_follow_the_flag(findocmre_set: Path, tmp_path: Path, capsys):
    source = tmp_path / "reports"
    source.mkdir()
    shutil.copy(findocmre_set / "pdfs" / "acme-2024.pdf", source)
    (source / "notes.txt").write_text("no pictures here\n", encoding="utf-8")
    out = tmp_path / "collection"
    assert _build(source, out, "--page-images", "50") == 0
    entries = {entry.name: entry for entry in read_manifest(manifest_path(out)).documents}  # type: ignore[union-attr]
    pdf, text = entries["reports_acme-2024.md"], entries["reports_notes.md"]
    assert (pdf.image_dpi, text.image_dpi, text.images) == (50, None, [])
    files = sorted(path.relative_to(out).as_posix() for path in (out / "reports_acme-2024.images").iterdir())
    assert files == [
        "reports_acme-2024.images/figure-p002-1.png",
        "reports_acme-2024.images/figure-p003-1.png",
        "reports_acme-2024.images/figure-p004-1.png",
        *(f"reports_acme-2024.images/page-00{n}.png" for n in range(1, 5)),
    ]
    assert [image["file"] for image in pdf.images] == files[3:] + files[:3]  # pages first, then figures
    assert pdf.images[4]["caption"] == "Figure 1" and pdf.images[4]["bbox"] == [36.0, 60.0, 324.0, 276.0]
    assert (pdf.images[0]["width"], pdf.images[0]["height"]) == (250, 209)  # 360 x 300 points at 50 dpi, rounded up

    assert _build(source, out, "--page-images", "50") == 0
    output = capsys.readouterr().out
    assert "0 converted, 2 unchanged" in output
    assert "pictures: 4 page images and 3 figures of 1 documents at 50 dpi\n" in output

    assert _build(source, out, "--no-page-images") == 0
    assert not (out / "reports_acme-2024.images").exists()
    assert read_manifest(manifest_path(out)).documents[0].images == []  # type: ignore[union-attr]
    assert "pictures: none kept; dropped 4 page images and 3 figures" in capsys.readouterr().out


def test_a_rebuild_without_the_flag_keeps_the_pictures_zero_shot_needs_and_says_so(
    findocmre_set: Path, tmp_path: Path, capsys
):
    """It deleted them, silently: a zero-shot run then refused every task."""
    source = tmp_path / "reports"
    source.mkdir()
    shutil.copy(findocmre_set / "pdfs" / "acme-2024.pdf", source)
    out = tmp_path / "collection"
    assert _build(source, out, "--page-images", "50") == 0
    capsys.readouterr()
    assert _build(source, out) == 0
    output = capsys.readouterr().out
    assert "0 converted, 1 unchanged" in output
    assert "pictures: 4 page images and 3 figures of 1 documents at 50 dpi (as the last build kept them; " in output
    assert len(list((out / "reports_acme-2024.images").iterdir())) == 7
    assert _build(source, out, "--page-images", "50", "--no-page-images") == 2
    assert "--no-page-images: not with --page-images" in capsys.readouterr().err


def test_a_resolution_out_of_range_is_refused_before_anything_is_written(tmp_path: Path, capsys):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.txt").write_text("a\n", encoding="utf-8")
    assert _build(tmp_path / "src", tmp_path / "out", "--page-images", "0") == 2
    assert "--page-images: 0 dpi is not between 1 and 600" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_hostile_page_size_keeps_the_markdown_and_says_why_there_are_no_pictures(tmp_path: Path, capsys):
    import pymupdf

    source = tmp_path / "src"
    source.mkdir()
    document = pymupdf.open()
    document.new_page(width=14400, height=14400).insert_text((72, 72), "a page of 200 by 200 inches")
    document.save(source / "huge.pdf")
    out = tmp_path / "collection"
    assert _build(source, out, "--page-images", "144") == 0
    [entry] = read_manifest(manifest_path(out)).documents  # type: ignore[union-attr]
    assert entry.images == [] and entry.image_dpi is None and not (out / "src_huge.images").exists()
    assert "no page images: page 1 would be 28800 x 28800 px at 144 dpi" in entry.notes[0]
    assert (out / "src_huge.md").read_text(encoding="utf-8").count("200 by 200 inches") == 1


def test_page_rendering_is_bounded_in_its_worker_per_page_and_keeps_the_markdown(tmp_path: Path, capsys):
    """Issue 45: a 31 KB PDF of 12 pages took 1.18 GB and wrote 780 MB, in the builder's own process, whatever
    --max-memory and --max-time said. Pages are rendered in a worker under them, each at most what a provider
    takes as one image: here a page of noise, 4.1 MB as PNG at 144 dpi."""
    import io
    import os

    import pymupdf
    from PIL import Image

    noise = io.BytesIO()
    Image.frombytes("RGB", (600, 600), os.urandom(600 * 600 * 3)).save(noise, "PNG")
    source = tmp_path / "src"
    source.mkdir()
    document = pymupdf.open()
    page = document.new_page()
    page.insert_text((72, 72), "a page of noise")
    page.insert_image(page.rect, stream=noise.getvalue())
    document.save(source / "noise.pdf")
    out = tmp_path / "collection"
    assert _build(source, out, "--page-images", "144", "--max-memory", "512", "--max-time", "60") == 0
    [entry] = read_manifest(manifest_path(out)).documents  # type: ignore[union-attr]
    assert entry.images == [] and entry.image_dpi is None and not (out / "src_noise.images").exists()
    assert entry.notes[0].startswith("no page images: page 1 is ") and "over the limit of 3,932,160" in entry.notes[0]
    assert "a page of noise" in (out / "src_noise.md").read_text(encoding="utf-8")
