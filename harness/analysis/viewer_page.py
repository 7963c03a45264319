"""The viewer's one page: markup and script only, its data fetched (index.json, then episodes/<n>.json).

Its Content-Security-Policy lets only its own script run (a nonce drawn when the page is made) and lets it
connect only to where the page came from: text from a log is only ever set as text, and even markup that
slipped through could neither run nor load anything.
"""

from __future__ import annotations

import html
import re
import secrets
from pathlib import Path

_PLACEHOLDER = re.compile("__(TITLE|NONCE|SERVED)__")
TEMPLATE = Path(__file__).with_name("templates") / "viewer.html"


def page_html(title: str, served: bool) -> str:
    """The page; SERVED: searches go to the server, else the page reads each episode file itself."""
    nonce = secrets.token_urlsafe(16)
    values = {"__TITLE__": html.escape(title), "__NONCE__": nonce, "__SERVED__": "true" if served else "false"}
    return _PLACEHOLDER.sub(lambda match: values[match.group(0)], TEMPLATE.read_text(encoding="utf-8"))
