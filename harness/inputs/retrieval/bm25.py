"""The local back end: no key, no network. A collection's chunks ranked by BM25 (bm25s: the Lucene variant,
k1 1.5, b 0.75, scored as a scipy sparse matrix), each collection indexed once per process while its files are
unchanged (the last KEPT_SETS searched are kept). Terms are case-folded words, and overlapping character pairs
within a run of Chinese, Japanese or Korean characters (as Lucene's CJK bigram filter cuts them): bm25s's own
tokenizer would make a whole Chinese run one term, and most of MuDABench is Chinese. Ties are ordered by file and
place, so a search repeats exactly."""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from harness.inputs.retrieval.base import Retrieval, Retriever
from harness.inputs.retrieval.chunks import Chunk, ChunkSettings, chunk_text, collection_documents

KEPT_SETS = 8
"""Collections whose index a back end keeps at once (the least recently searched is dropped, and built again if
searched again): a MuDABench set of 38 annual reports is ~50k chunks, and a run goes through hundreds of sets."""
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TERMS = re.compile(rf"[{_CJK}]+|[^\W{_CJK}]+")
_IS_CJK = re.compile(rf"[{_CJK}]")


def terms(text: str) -> list[str]:
    """TEXT's terms: case-folded words; a CJK run as its overlapping character pairs (a lone character as itself)."""
    found: list[str] = []
    for run in _TERMS.findall(text.casefold()):
        if _IS_CJK.match(run):
            found.extend(run[i : i + 2] for i in range(max(1, len(run) - 1)))
        else:
            found.append(run)
    return found


@dataclass(frozen=True)
class _Index:
    chunks: list[tuple[str, int, str]]
    """(file, place in it, text) of every chunk."""
    bm25: Any


class LocalBM25(Retriever):
    name = "local"

    def __init__(self, chunking: ChunkSettings) -> None:
        super().__init__(chunking)
        self._indexes: OrderedDict[tuple[Any, ...], _Index] = OrderedDict()
        self._lock = threading.Lock()

    def settings(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "chunking": self.chunking.record(),
            "ranking": f"BM25 (bm25s {metadata.version('bm25s')}, lucene, k1 1.5, b 0.75; terms: words, CJK bigrams)",
        }

    def search(self, collection: Path, query: str, k: int, file: str | None = None) -> Retrieval:
        index = self._index(collection)
        if not index.chunks:
            return Retrieval([])
        wanted = terms(query)
        scores = index.bm25.get_scores(wanted) if wanted else [0.0] * len(index.chunks)
        places = [i for i in range(len(index.chunks)) if file is None or index.chunks[i][0] == file]
        order = sorted(places, key=lambda i: (-float(scores[i]), index.chunks[i][:2]))
        best = [Chunk(*index.chunks[i][:2], float(scores[i]), index.chunks[i][2]) for i in order[:k]]
        return Retrieval(best, {"chunks": len(index.chunks)})

    def _index(self, collection: Path) -> _Index:
        documents = collection_documents(collection)
        key = tuple((str(path), path.stat().st_size, path.stat().st_mtime_ns) for path in documents)
        with self._lock:
            if key not in self._indexes:
                self._indexes[key] = self._build(collection, documents)
                while len(self._indexes) > KEPT_SETS:
                    self._indexes.popitem(last=False)
            self._indexes.move_to_end(key)
            return self._indexes[key]

    def _build(self, collection: Path, documents: list[Path]) -> _Index:
        import bm25s

        chunks = [
            (path.relative_to(collection).as_posix(), place, text)
            for path in documents
            for place, text in enumerate(chunk_text(path.read_text(encoding="utf-8", errors="replace"), self.chunking))
        ]
        bm25 = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
        if chunks:
            bm25.index([terms(text) for _, _, text in chunks], show_progress=False)
        return _Index(chunks, bm25)
