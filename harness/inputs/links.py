"""Symbolic links in the inputs: a task file or a collection that resolves outside its folder is refused unless
the user says to follow it, and a link inside a collection that leads out of it is refused always.

A dataset is data from elsewhere: `collections/notes -> /home/someone` mounted someone's home into the sandbox
(the agent read it, the provider saw it). The folders the user names (`--collections-dir`, `--tasks-dir`) are
followed as given; what is in them is checked here.
"""

from __future__ import annotations

import os
from pathlib import Path

from harness.core.errors import InputError

_FOLLOW_FLAG = "--follow-links"


def contained(root: Path, path: Path, follow_links: bool) -> Path:
    """PATH (a task file or a collection under ROOT) resolved; refused when it leads out of ROOT, unless
    FOLLOW_LINKS."""
    resolved = path.resolve()
    if not follow_links and not resolved.is_relative_to(root.resolve()):
        raise InputError(f"{path}: a link to {resolved}, outside {root}; pass {_FOLLOW_FLAG} to use it anyway")
    return resolved


def refuse_links_out_of(collection: Path) -> None:
    """A link inside COLLECTION that resolves outside it (or nowhere inside it) is refused: no backend follows it
    into the sandbox as the same file (a bind mount resolves it inside the sandbox, E2B refuses every link),
    and the collection's hash would read what the agent never sees."""
    root = collection.resolve()
    for folder, names, files in os.walk(root):
        for name in sorted([*names, *files]):
            path = Path(folder) / name
            if path.is_symlink() and not _resolves_inside(path, root):
                raise InputError(
                    f"{path}: a link to {os.readlink(path)}, outside the collection {collection}; "
                    "replace it with the file it names"
                )


def _resolves_inside(link: Path, root: Path) -> bool:
    try:
        return link.resolve().is_relative_to(root)
    except (OSError, RuntimeError):  # a loop of links (RuntimeError before Python 3.13)
        return False
