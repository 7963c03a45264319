"""Token counts for the manifest: tiktoken's cl100k_base from the encoding file litellm ships (no download),
else an estimate of 4 characters per token. The manifest names which one counted."""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

_ESTIMATE = "estimate: 4 characters per token"


@functools.cache
def tokenizer() -> tuple[str, Callable[[str], int]]:
    """(name, count) for this process."""
    found = encoding()
    if found is None:
        return _ESTIMATE, _estimate
    name, coder = found
    return name, lambda text: len(coder.encode(text, disallowed_special=()))


@functools.cache
def encoding() -> tuple[str, Any] | None:
    """(name, tiktoken's cl100k_base encoding) for this process, read offline from litellm's copy; None without one
    (what counts tokens then estimates them, and says so)."""
    try:
        import tiktoken
    except ImportError:
        return None
    bundled = _litellm_tokenizers_dir()
    if bundled and "TIKTOKEN_CACHE_DIR" not in os.environ:
        os.environ["TIKTOKEN_CACHE_DIR"] = str(bundled)  # tiktoken reads it on first load; offline from here
    try:
        return f"tiktoken {tiktoken.__version__} cl100k_base", tiktoken.get_encoding("cl100k_base")
    except Exception:  # no cached encoding file and no network
        return None


def _litellm_tokenizers_dir() -> Path | None:
    """Found without importing litellm, whose import fetches a price map from the network."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
    return folder if folder.is_dir() else None


def _estimate(text: str) -> int:
    return (len(text) + 3) // 4
