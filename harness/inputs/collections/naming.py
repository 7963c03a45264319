"""Output names: `<source>_<title>.md`, flat. `source` is the first folder under SRC_DIR (or SRC_DIR's own
name for files at its top), `title` the file's stem, both slugged. Sources whose names collide all get a
short hash of their relative path, so a name never depends on the order files are listed in."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import defaultdict
from pathlib import PurePosixPath

_MAX_SLUG = 80
_UNDECOMPOSED = str.maketrans(
    {"ø": "o", "æ": "ae", "œ": "oe", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ħ": "h", "ı": "i", "ŀ": "l", "ŧ": "t"}
)
"""Latin letters with a mark that Unicode does not decompose (NFKD leaves `ø` whole while `é` splits into `e`
and an accent), folded too: every accented Latin letter loses its accent, not only some."""


def slug(text: str) -> str:
    """Lower case, accents dropped (`Übersicht` -> `ubersicht`, `Straße` -> `strasse`, `København` ->
    `kobenhavn`), other letters and digits of any script kept, everything else a single `-`."""
    decomposed = unicodedata.normalize("NFKD", text.casefold()).translate(_UNDECOMPOSED)
    bare = "".join(char for char in decomposed if not unicodedata.combining(char))
    words = re.sub(r"[\W_]+", "-", bare).strip("-")
    return words[:_MAX_SLUG].rstrip("-") or "untitled"


def _base_name(relative: PurePosixPath, root_name: str) -> str:
    source = relative.parts[0] if len(relative.parts) > 1 else root_name
    return f"{slug(source)}_{slug(relative.stem)}"


def output_names(relatives: list[PurePosixPath], root_name: str) -> dict[PurePosixPath, str]:
    """Each source's output file name; colliding ones get `-<6 hex of sha256(relative path)>`."""
    by_base: dict[str, list[PurePosixPath]] = defaultdict(list)
    for relative in relatives:
        by_base[_base_name(relative, root_name)].append(relative)
    names: dict[PurePosixPath, str] = {}
    for base, group in by_base.items():
        for relative in group:
            suffix = "" if len(group) == 1 else "-" + hashlib.sha256(str(relative).encode()).hexdigest()[:6]
            names[relative] = f"{base}{suffix}.md"
    if len(set(names.values())) != len(names):  # a hashed name equal to a plain one: vanishingly rare
        names = {
            rel: f"{_base_name(rel, root_name)}-{hashlib.sha256(str(rel).encode()).hexdigest()[:12]}.md"
            for rel in relatives
        }
    return names
