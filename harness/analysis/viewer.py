"""`python -m harness view RUN... --static DIR`: the viewer as files to host: the page, `index.json`, and one
`episodes/<n>.json` per episode, written one at a time (memory holds one episode), and the images the episodes
show under `images/`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.analysis.viewer_page import page_html
from harness.analysis.viewer_site import ViewerSite
from harness.core.json_text import json_text
from harness.records.run_folder import write_atomic


def write_static(site: ViewerSite, out: Path) -> Path:
    """OUT/index.html and its data; open it through any web server (a browser will not fetch from file://)."""
    episodes = out / "episodes"
    episodes.mkdir(parents=True, exist_ok=True)
    for number in range(len(site.episodes)):
        episode = site.episode(number)
        if episode is not None:
            write_atomic(episodes / f"{number}.json", json_text(episode))
            _write_images(site, episode, out)
    write_atomic(out / "index.json", json_text(site.index()))
    write_atomic(out / "index.html", page_html(site.title, served=False))
    return out / "index.html"


def _write_images(site: ViewerSite, episode: dict[str, Any], out: Path) -> None:
    """The images EPISODE's steps show, copied beside the page at the address each step names."""
    views = [view for step in episode["steps"] for view in [step.get("image") or {}, *step.get("prompt_images", [])]]
    for view in views:
        src = view.get("src")
        if src is None or (out / src).exists():
            continue
        found = site.image(src.removeprefix("images/").rpartition(".")[0])
        if found is not None:
            (out / "images").mkdir(exist_ok=True)
            (out / src).write_bytes(found[0])
