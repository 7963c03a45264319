"""Token counts for the manifest: tiktoken's cl100k_base from the encoding file litellm ships (no download),
else an estimate of 4 characters per token. The manifest names which one counted."""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Callable
from pathlib import Path

_ESTIMATE = "estimate: 4 characters per token"


@functools.cache
def tokenizer() -> tuple[str, Callable[[str], int]]:
    """(name, count) for this process."""
    try:
        import tiktoken
    except ImportError:
        return _ESTIMATE, _estimate
    bundled = _litellm_tokenizers_dir()
    if bundled and "TIKTOKEN_CACHE_DIR" not in os.environ:
        os.environ["TIKTOKEN_CACHE_DIR"] = str(bundled)  # tiktoken reads it on first load; offline from here
    try:
        encoding = tiktoken.get_encoding("cl100k_base")
    except Exception:  # no cached encoding file and no network
        return _ESTIMATE, _estimate
    return f"tiktoken {tiktoken.__version__} cl100k_base", lambda text: len(
        encoding.encode(text, disallowed_special=())
    )


def _litellm_tokenizers_dir() -> Path | None:
    """Found without importing litellm, whose import fetches a price map from the network."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
    return folder if folder.is_dir() else None


def _estimate(text: str) -> int:
    return (len(text) + 3) // 4
