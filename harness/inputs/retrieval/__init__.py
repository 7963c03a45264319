"""Retrieval over a collection: its documents cut into chunks and the best k for a query, by a local BM25 index (no
key, no network) or OpenAI's File Search, behind one interface (`Retriever`)."""

__all__ = ["backends", "base", "chunks", "embeddings", "file_search"]
