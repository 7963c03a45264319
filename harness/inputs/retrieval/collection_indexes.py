"""The indexes a local back end keeps of the collections it searched: one per collection while its files are
unchanged, the last KEPT_SETS searched kept (the least recently searched dropped, and built again if searched
again): a MuDABench set of 38 annual reports is ~50k chunks, and a run goes through hundreds of sets."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar

from harness.inputs.retrieval.chunks import Chunk, ChunkSettings, chunk_text, collection_documents

KEPT_SETS = 8
Index = TypeVar("Index")


class CollectionIndexes(Generic[Index]):
    def __init__(self, build: Callable[[Path, list[Path]], Index]) -> None:
        self._build = build
        self._indexes: OrderedDict[tuple[Any, ...], Index] = OrderedDict()
        self._lock = threading.Lock()

    def of(self, collection: Path) -> Index:
        """COLLECTION's index, built from its documents (in name order) when it has none for them."""
        documents = collection_documents(collection)
        key = tuple((str(path), path.stat().st_size, path.stat().st_mtime_ns) for path in documents)
        with self._lock:
            if key not in self._indexes:
                self._indexes[key] = self._build(collection, documents)
                while len(self._indexes) > KEPT_SETS:
                    self._indexes.popitem(last=False)
            self._indexes.move_to_end(key)
            return self._indexes[key]


def document_chunks(collection: Path, documents: list[Path], chunking: ChunkSettings) -> list[tuple[str, int, str]]:
    """(file, place in it, text) of every chunk of DOCUMENTS, in order."""
    return [
        (path.relative_to(collection).as_posix(), place, text)
        for path in documents
        for place, text in enumerate(chunk_text(path.read_text(encoding="utf-8", errors="replace"), chunking))
    ]


def best_chunks(chunks: list[tuple[str, int, str]], scores: Sequence[float], k: int, file: str | None) -> list[Chunk]:
    """The K best-scored of CHUNKS (FILE's only, when given), ties in file and place order, so a search repeats
    exactly."""
    places = [i for i in range(len(chunks)) if file is None or chunks[i][0] == file]
    order = sorted(places, key=lambda i: (-float(scores[i]), chunks[i][:2]))
    return [Chunk(*chunks[i][:2], float(scores[i]), chunks[i][2]) for i in order[:k]]
