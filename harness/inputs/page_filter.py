"""Which of a document's pages go to the model (`page_filter`): every page (`none`), or, as FinDocMRE's paper
reads (Appendix C.4: its filtering "remov[es] decorative elements and text-only pages"), only the pages that draw a
figure (`figures`).

A page draws a figure when the collection kept an embedded image on it (the build keeps each PDF's embedded images
with their page and pixel size) that passes the paper's geometric rule (Appendix A.1: "discarding images with low
resolutions or extreme aspect ratios"), with our numbers, as the paper gives none: at least `MIN_SIDE_PX` pixels a
side and at most `MAX_ASPECT` to 1. A text-only page has no embedded image; a decorative page has only images that
fail the rule (logos, icons, rules and bands). A page holding one of the task's charts is always kept, and a
document none of whose pages draws a figure (its charts drawn as vectors, say) is sent whole rather than not at all.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_ASPECT", "MIN_SIDE_PX", "PAGE_FILTERS", "filtered_pages"]

PAGE_FILTERS = ("none", "figures")
MIN_SIDE_PX = 100
"""A smaller image is an icon or a logo, not a chart a question can be read from."""
MAX_ASPECT = 5.0
"""A longer image is a divider, a header band or a strip of logos."""


def filtered_pages(files: dict[int, str], images: list[dict[str, Any]], rule: str, keep: set[int]) -> dict[int, str]:
    """FILES (page -> image file) under RULE: all of them, or those whose page draws a figure or is in KEEP (all of
    them when that leaves none)."""
    if rule == "none":
        return files
    drawing = {int(image["page"]) for image in images if image.get("kind") == "figure" and _a_figure(image)}
    return {page: file for page, file in files.items() if page in drawing or page in keep} or files


def _a_figure(image: dict[str, Any]) -> bool:
    width, height = int(image.get("width") or 0), int(image.get("height") or 0)
    return min(width, height) >= MIN_SIDE_PX and max(width, height) <= MAX_ASPECT * min(width, height)
