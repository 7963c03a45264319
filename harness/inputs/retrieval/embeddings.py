"""The embeddings back end: the local back end's chunks ranked by the cosine of their embeddings with the
question's, the embeddings from any OpenAI-compatible `/v1/embeddings` endpoint (OpenAI's, vLLM's, Ollama's, a
text-embeddings-inference server's) through the official SDK. A collection is embedded once per process while its
files are unchanged (collection_indexes.py), BATCH chunks a request, each reply checked (one vector per input, of
one dimension, finite) before it is used: a reply that is not is the service's failure, as a refused request is.

The key is EMBEDDINGS_API_KEY's, else OPENAI_API_KEY's; an endpoint of the user's own may need none.
Documented at https://platform.openai.com/docs/api-reference/embeddings/create.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from harness.inputs.retrieval.base import Retrieval, RetrievalFailed, Retriever
from harness.inputs.retrieval.chunks import ChunkSettings
from harness.inputs.retrieval.collection_indexes import CollectionIndexes, best_chunks, document_chunks
from harness.inputs.retrieval.file_search import service_reason

BATCH = 64
"""Chunks one request embeds (OpenAI takes up to 2,048 inputs; local servers often far fewer)."""
KEY_VARIABLES = ("EMBEDDINGS_API_KEY", "OPENAI_API_KEY")


@dataclass(frozen=True)
class _Index:
    chunks: list[tuple[str, int, str]]
    vectors: Any
    """One unit-length row per chunk (numpy)."""


class OpenAICompatibleEmbeddings(Retriever):
    name = "embeddings"

    def __init__(self, chunking: ChunkSettings, model: str, api_base: str | None = None) -> None:
        super().__init__(chunking)
        self.model = model
        self.api_base = api_base
        self._indexes = CollectionIndexes(lambda collection, documents: self._build(collection, documents))
        self._client: Any = None

    def settings(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "chunking": self.chunking.record(),
            "ranking": f"cosine of {self.model} embeddings (openai {metadata.version('openai')})",
            **({"api_base": self.api_base} if self.api_base else {}),
        }

    def search(self, collection: Path, query: str, k: int, file: str | None = None) -> Retrieval:
        index = self._indexes.of(collection)
        if not index.chunks:
            return Retrieval([])
        [question] = self._embed([query])
        scores = index.vectors @ question
        return Retrieval(best_chunks(index.chunks, scores, k, file), {"chunks": len(index.chunks)})

    def _build(self, collection: Path, documents: list[Path]) -> _Index:
        import numpy

        chunks = document_chunks(collection, documents, self.chunking)
        texts = [text for _, _, text in chunks]
        rows = [row for start in range(0, len(texts), BATCH) for row in self._embed(texts[start : start + BATCH])]
        return _Index(chunks, numpy.array(rows) if rows else numpy.zeros((0, 0)))

    def _embed(self, texts: list[str]) -> list[Any]:
        """TEXTS' embeddings, each of unit length; a refused request or an unusable reply is RetrievalFailed."""
        import numpy
        import openai

        try:
            reply = self.client.embeddings.create(model=self.model, input=texts, encoding_format="float")
        except openai.APIError as error:
            raise RetrievalFailed(f"embeddings ({self.model}): {service_reason(error)}") from None
        try:  # the SDK builds a reply without checking it: any field may be missing or of another type
            vectors = sorted(reply.data, key=lambda item: int(item.index))
            indexes = [int(item.index) for item in vectors]
            rows = [numpy.asarray(item.embedding, dtype=float) for item in vectors]
        except (AttributeError, TypeError, ValueError):
            raise RetrievalFailed(f"embeddings ({self.model}): a reply not of OpenAI's embedding list") from None
        if indexes != list(range(len(texts))):
            raise RetrievalFailed(f"embeddings ({self.model}): {len(vectors)} vectors for {len(texts)} inputs")
        if len({row.shape for row in rows}) != 1 or rows[0].ndim != 1 or not rows[0].size:
            raise RetrievalFailed(f"embeddings ({self.model}): vectors of different or no dimensions")
        norms = [float(numpy.linalg.norm(row)) for row in rows]
        if not all(math.isfinite(norm) and norm > 0 for norm in norms):
            raise RetrievalFailed(f"embeddings ({self.model}): a vector of zero, infinite or undefined length")
        return [row / norm for row, norm in zip(rows, norms, strict=True)]

    @property
    def client(self) -> Any:
        if self._client is None:
            import openai

            key = next((os.environ[name] for name in KEY_VARIABLES if os.environ.get(name)), "none")
            self._client = openai.OpenAI(base_url=self.api_base, api_key=key, max_retries=2)
        return self._client
