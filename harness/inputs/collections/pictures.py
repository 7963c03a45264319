"""The pictures a collection keeps (`--page-images`: each PDF's pages and figures), as a build reads and tells
them: the resolution an earlier build kept them at, which a rebuild keeps, and the line saying how many it kept
or dropped."""

from __future__ import annotations

from collections import Counter

from harness.inputs.collections.manifest import Manifest


def built_resolution(manifest: Manifest | None) -> int | None:
    """The resolution the collection's page images were kept at (the most documents' when they differ); None when
    it keeps none."""
    resolutions = Counter(entry.image_dpi for entry in (manifest.documents if manifest else []) if entry.image_dpi)
    return resolutions.most_common(1)[0][0] if resolutions else None


def pictures_line(before: Manifest | None, after: Manifest | None, kept_from_before: bool) -> str | None:
    """`pictures: 8 page images and 6 figures of 2 documents at 144 dpi (...)`, or how many were dropped; None when
    the collection kept none before and keeps none now."""
    kinds = _counts(after)
    if kinds["document"]:
        dpi = built_resolution(after)
        line = f"pictures: {kinds['page']} page images and {kinds['figure']} figures of {kinds['document']} documents"
        line += f" at {dpi} dpi"
        return line + (" (as the last build kept them; --no-page-images drops them)" if kept_from_before else "")
    dropped = _counts(before)
    if dropped["document"]:
        return f"pictures: none kept; dropped {dropped['page']} page images and {dropped['figure']} figures"
    return None


def _counts(manifest: Manifest | None) -> Counter[str]:
    counts: Counter[str] = Counter()
    for entry in manifest.documents if manifest else []:
        if entry.images:
            counts["document"] += 1
            counts.update(str(image.get("kind")) for image in entry.images)
    return counts
