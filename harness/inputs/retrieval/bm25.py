"""The local back end: no key, no network. A collection's chunks ranked by BM25 (bm25s: the Lucene variant,
k1 1.5, b 0.75, scored as a scipy sparse matrix), each collection indexed once per process while its files are
unchanged (collection_indexes.py). Terms are case-folded words, and overlapping character pairs
within a run of Chinese, Japanese or Korean characters (as Lucene's CJK bigram filter cuts them): bm25s's own
tokenizer would make a whole Chinese run one term, and most of MuDABench is Chinese."""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from harness.inputs.retrieval.base import Retrieval, Retriever
from harness.inputs.retrieval.chunks import ChunkSettings
from harness.inputs.retrieval.collection_indexes import CollectionIndexes, best_chunks, document_chunks

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
        self._indexes = CollectionIndexes(lambda collection, documents: self._build(collection, documents))

    def settings(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "chunking": self.chunking.record(),
            "ranking": f"BM25 (bm25s {metadata.version('bm25s')}, lucene, k1 1.5, b 0.75; terms: words, CJK bigrams)",
        }

    def search(self, collection: Path, query: str, k: int, file: str | None = None) -> Retrieval:
        index = self._indexes.of(collection)
        if not index.chunks:
            return Retrieval([])
        wanted = terms(query)
        scores = index.bm25.get_scores(wanted) if wanted else [0.0] * len(index.chunks)
        return Retrieval(best_chunks(index.chunks, scores, k, file), {"chunks": len(index.chunks)})

    def _build(self, collection: Path, documents: list[Path]) -> _Index:
        import bm25s

        chunks = document_chunks(collection, documents, self.chunking)
        bm25 = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
        if chunks:
            bm25.index([terms(text) for _, _, text in chunks], show_progress=False)
        return _Index(chunks, bm25)
