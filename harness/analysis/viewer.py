"""`python -m harness view RUN... --static DIR`: the viewer as files to host: the page, `index.json`, and one
`episodes/<n>.json` per episode, written one at a time (memory holds one episode)."""

from __future__ import annotations

from pathlib import Path

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
    write_atomic(out / "index.json", json_text(site.index()))
    write_atomic(out / "index.html", page_html(site.title, served=False))
    return out / "index.html"
