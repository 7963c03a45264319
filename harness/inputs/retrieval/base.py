"""What a retrieval back end is: `search(collection, query, k)` gives the k best chunks of the collection's
documents; `settings()` is what run.yaml records of it. The back ends by name: `local` (BM25, bm25.py), `openai`
(File Search, file_search.py) and `embeddings` (any OpenAI-compatible embeddings endpoint, embeddings.py), each
imported when first made."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from harness.core.retrieval_stores import StoreUse
from harness.core.status import EpisodeFailure, Status
from harness.inputs.retrieval.chunks import Chunk, ChunkSettings

RETRIEVERS = ("local", "openai", "embeddings")


class RetrievalFailed(EpisodeFailure):
    """The retrieval service failed (a refused request, a file it could not process): the provider's failure, as a
    model's is, so a resume asks again; never the agent's outcome nor ours."""

    status = Status.MODEL_ERROR


@dataclass(frozen=True)
class Retrieval:
    """What one search found, and what the back end says of where it searched (its store, its size)."""

    chunks: list[Chunk]
    source: dict[str, Any] = field(default_factory=dict)


class Retriever(ABC):
    """A back end: cuts a collection's documents as `chunking` says and ranks the chunks for a query."""

    name: ClassVar[str]
    max_k: ClassVar[int | None] = None
    """The most chunks one search may return (None: as many as there are)."""

    def __init__(self, chunking: ChunkSettings) -> None:
        self.chunking = chunking
        self.keep_after_run = False
        """Keep what the back end made for the run's collections (File Search's stores) once it ends."""

    def release(self, collections: Iterable[Path]) -> list[StoreUse]:
        """At the run's end: remove what the back end made for COLLECTIONS, unless `keep_after_run`; what each
        thing held and cost, removed or kept. Nothing by default."""
        return []

    @abstractmethod
    def settings(self) -> dict[str, Any]:
        """What run.yaml records: the back end, its chunking and its ranking."""

    @abstractmethod
    def search(self, collection: Path, query: str, k: int, file: str | None = None) -> Retrieval:
        """The K best chunks of COLLECTION's documents (only FILE's, a path in it, when given) for QUERY, best
        first (fewer when it has fewer)."""
