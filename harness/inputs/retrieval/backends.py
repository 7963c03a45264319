"""The retrieval back ends by name (`--solver-arg retriever=local|openai`), each imported only when asked for (the
local one needs the `retrieval` extra, the other the OpenAI SDK)."""

from __future__ import annotations

from harness.inputs.retrieval.base import RETRIEVERS, Retriever
from harness.inputs.retrieval.chunks import ChunkSettings


def make_retriever(name: str, chunking: ChunkSettings, api_base: str | None = None) -> Retriever:
    """The back end NAME (one of RETRIEVERS)."""
    if name == "local":
        from harness.inputs.retrieval.bm25 import LocalBM25

        return LocalBM25(chunking)
    if name == "openai":
        from harness.inputs.retrieval.file_search import OpenAIFileSearch

        return OpenAIFileSearch(chunking, api_base)
    raise ValueError(f"retriever={name!r}: one of {', '.join(RETRIEVERS)}")
