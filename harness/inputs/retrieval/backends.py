"""The retrieval back ends by name (`--solver-arg retriever=local|openai|embeddings`), each imported only when asked
for (the local and embeddings ones need the `retrieval` extra, File Search the OpenAI SDK)."""

from __future__ import annotations

from harness.inputs.retrieval.base import RETRIEVERS, Retriever
from harness.inputs.retrieval.chunks import ChunkSettings


def make_retriever(
    name: str, chunking: ChunkSettings, api_base: str | None = None, embedding_model: str | None = None
) -> Retriever:
    """The back end NAME (one of RETRIEVERS); `embeddings` needs EMBEDDING_MODEL."""
    if name == "local":
        from harness.inputs.retrieval.bm25 import LocalBM25

        return LocalBM25(chunking)
    if name == "openai":
        from harness.inputs.retrieval.file_search import OpenAIFileSearch

        return OpenAIFileSearch(chunking, api_base)
    if name == "embeddings" and embedding_model:
        from harness.inputs.retrieval.embeddings import OpenAICompatibleEmbeddings

        return OpenAICompatibleEmbeddings(chunking, embedding_model, api_base)
    if name == "embeddings":
        raise ValueError("retriever=embeddings needs embedding_model=NAME (the endpoint's embedding model)")
    raise ValueError(f"retriever={name!r}: one of {', '.join(RETRIEVERS)}")
