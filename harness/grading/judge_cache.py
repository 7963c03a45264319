"""The judges' persistent cache: one file per verdict, keyed on everything that can change it.

Only valid verdicts are stored, so a failed or malformed call is retried next time; a re-grade or a
resume that asks the same judge the same thing pays nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from harness.core.json_text import json_text


def cache_key(model: str, prompt_digest: str, params: dict[str, Any], question: str, gold: str, answer: str) -> str:
    fields = {
        "model": model,
        "prompt": prompt_digest,
        "params": params,
        "question": question,
        "gold": gold,
        "answer": answer,
    }
    return hashlib.sha256(json_text(fields, sort_keys=True).encode()).hexdigest()


class JudgeCache:
    def __init__(self, root: Path):
        self.root = root

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            entry = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):  # missing, or torn by a crash: asked again
            return None
        return entry if isinstance(entry, dict) and entry.get("key") == key else None

    def put(self, key: str, entry: dict[str, Any]) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        # A unique temporary name: two threads may store the same verdict at once.
        handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(json_text({"key": key, **entry}))
        os.replace(temporary, path)
