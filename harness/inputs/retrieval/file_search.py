"""The OpenAI back end: File Search's vector stores through the official SDK, as MuDABench's paper retrieved.

One vector store per collection and chunking, named by the digest of its documents (`metadata.harness_collection`,
`harness_chunking`): found again by walking the store list page by page while both are unchanged, else created
with the run's static chunking and each document uploaded (`files.create`, purpose `assistants`) and attached
(`vector_stores.files.create`), its processing polled to the end; a file OpenAI could not process fails the
search with its reason. A search is `vector_stores.search` with the question (`rewrite_query`, as the
`file_search` tool rewrites its queries), at most 50 results (OpenAI's bound), one document's alone by an
attribute filter (each file is attached with its collection path as `file`). At the run's end its stores
are deleted with their files, or kept for the next run with `keep_store=true`, each with the storage it held and its
estimated cost said and recorded in run.yaml (`release`; storage is billed per GB a day: each search records the
store's `usage_bytes`); `delete` removes a collection's store and its files (`python -m harness collection
delete-store NAME`). The key is OPENAI_API_KEY's.

Documented at https://platform.openai.com/docs/api-reference/vector-stores (and /vector-stores-files,
/vector-stores/search, /files) and https://platform.openai.com/docs/guides/retrieval.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

from harness.core.retrieval_stores import StoreUse
from harness.inputs.retrieval.base import Retrieval, RetrievalFailed, Retriever
from harness.inputs.retrieval.chunks import Chunk, ChunkSettings, collection_documents

STORAGE_USD_PER_GB_DAY = 0.10
"""OpenAI's list price of vector-store storage (its pricing page; the first GB an account holds is free, which a
run cannot see)."""
MAX_RESULTS = 50
"""The most results one search returns (`max_num_results`: 1 to 50)."""
_POLL_S = 600.0


def collection_digest(collection: Path) -> str:
    """sha256 over the collection's documents (their names and contents): a store is reused while it is unchanged."""
    digest = hashlib.sha256()
    for path in collection_documents(collection):
        digest.update(path.relative_to(collection).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


class OpenAIFileSearch(Retriever):
    name = "openai"
    max_k = MAX_RESULTS

    def __init__(self, chunking: ChunkSettings, api_base: str | None = None) -> None:
        super().__init__(chunking)
        self.api_base = api_base
        self._stores: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._client: Any = None

    def settings(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "chunking": self.chunking.record(),
            "ranking": f"OpenAI File Search (vector_stores.search, rewrite_query; openai {metadata.version('openai')})",
            **({"api_base": self.api_base} if self.api_base else {}),
        }

    def search(self, collection: Path, query: str, k: int, file: str | None = None) -> Retrieval:
        import openai

        only = {"filters": {"type": "eq", "key": "file", "value": file}} if file is not None else {}
        try:
            store = self.store_for(collection)
            page = self.client.vector_stores.search(
                store.id, query=query, max_num_results=min(k, MAX_RESULTS), rewrite_query=True, **only
            )
        except openai.APIError as error:
            raise RetrievalFailed(f"OpenAI File Search: {service_reason(error)}") from None
        chunks = [
            Chunk(str((result.attributes or {}).get("file", result.filename)), place, result.score, part.text)
            for result in page.data
            for place, part in enumerate(result.content)
        ]
        return Retrieval(chunks[:k], {"vector_store": store.id, "usage_bytes": store.usage_bytes})

    @property
    def client(self) -> Any:
        if self._client is None:
            import openai

            self._client = openai.OpenAI(base_url=self.api_base, max_retries=2)
        return self._client

    def store_for(self, collection: Path) -> Any:
        """The collection's vector store: the one made for these documents, else a new one with them uploaded."""
        digest = collection_digest(collection)
        with self._lock:
            if digest not in self._stores:
                self._stores[digest] = self._find(digest) or self._create(collection, digest)
            return self._stores[digest]

    def _find(self, digest: str) -> Any:
        """The store made for these documents with this chunking."""
        return next(
            (store for store in self._stores_of(digest) if (store.metadata or {}).get("harness_chunking") == self._cut),
            None,
        )

    def _stores_of(self, digest: str) -> list[Any]:
        """Every finished store made for these documents, whatever its chunking."""
        return [
            store
            for store in self.client.vector_stores.list(limit=100)  # the SDK asks for each next page (`after`)
            if (store.metadata or {}).get("harness_collection") == digest and store.status == "completed"
        ]

    @property
    def _cut(self) -> str:
        return f"{self.chunking.max_tokens}/{self.chunking.overlap_tokens}"

    def _create(self, collection: Path, digest: str) -> Any:
        strategy = {
            "type": "static",
            "static": {
                "max_chunk_size_tokens": self.chunking.max_tokens,
                "chunk_overlap_tokens": self.chunking.overlap_tokens,
            },
        }
        store = self.client.vector_stores.create(
            name=f"harness-{digest[:16]}",
            metadata={"harness_collection": digest, "harness_chunking": self._cut},
            chunking_strategy=strategy,
        )
        for path in collection_documents(collection):
            name = path.relative_to(collection).as_posix()
            attached = self.client.vector_stores.files.upload_and_poll(
                vector_store_id=store.id,
                file=(path.name, path.read_bytes()),
                attributes={"file": name},
                chunking_strategy=strategy,
                max_wait_seconds=_POLL_S,
            )
            if attached.status != "completed":
                why = attached.last_error.message if attached.last_error else attached.status
                raise RetrievalFailed(f"OpenAI File Search could not process {name}: {why}")
        return self.client.vector_stores.retrieve(store.id)

    def delete(self, collection: Path) -> bool:
        """Remove the collection's stores (any chunking) and their uploaded files; False when there was none."""
        import openai

        try:
            stores = self._stores_of(collection_digest(collection))
            for store in stores:
                file_ids = [attached.id for attached in self.client.vector_stores.files.list(store.id, limit=100)]
                self.client.vector_stores.delete(store.id)
                for file_id in file_ids:
                    self.client.files.delete(file_id)
        except openai.APIError as error:
            raise RetrievalFailed(f"OpenAI File Search: {service_reason(error)}") from None
        gone = {store.id for store in stores}
        self._stores = {digest: kept for digest, kept in self._stores.items() if kept.id not in gone}
        return bool(stores)

    def release(self, collections: Iterable[Path]) -> list[StoreUse]:
        """Each collection's stores deleted with their files (kept with `keep_after_run`), each with the storage it
        held and its estimated cost: usage_bytes for the time since its creation at OpenAI's list price."""
        used = []
        for collection in collections:
            stores = self._stores_of(collection_digest(collection)) if collection_documents(collection) else []
            if not stores:
                continue
            used += [
                StoreUse.priced(
                    store.id,
                    collection.name,
                    max(0, store.usage_bytes or 0),
                    max(0.0, time.time() - store.created_at),
                    STORAGE_USD_PER_GB_DAY,
                    kept=self.keep_after_run,
                )
                for store in stores
            ]
            if not self.keep_after_run:
                self.delete(collection)
        return used


def service_reason(error: Exception) -> str:
    """An OpenAI SDK error as one line: its status and the service's message."""
    status = getattr(error, "status_code", None)
    body = getattr(error, "body", None)
    message = body.get("message") if isinstance(body, dict) else None
    text = message or str(error)
    return f"{status} {text}" if status else text
